"""shoe-ctl: the card-shoe controller for Seven Card Stud tables."""

__version__ = "0.1.0"
