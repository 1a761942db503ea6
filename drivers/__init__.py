"""Device drivers: the serial shoe, LED sinks, dealer buttons."""
