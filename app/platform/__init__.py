"""The machinery under every area: what the factory wires in before any area runs."""
