pytest_plugins = ["hil.pytest_plugin"]
