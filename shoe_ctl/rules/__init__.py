"""The rules core: pure stud dealing rules. No I/O, no threads, no imports from drivers or hil."""
