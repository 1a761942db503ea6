"""Hardware-in-the-loop: the virtual shoe, the simulated dealer, scenarios, fault injection."""
