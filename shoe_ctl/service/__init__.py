"""The service around the state machine: the controller's queue, the journal, recovery."""
