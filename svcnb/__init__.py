"""svcnb."""
