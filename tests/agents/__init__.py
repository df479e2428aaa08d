"""Small agent programs the tests run as subprocesses."""
