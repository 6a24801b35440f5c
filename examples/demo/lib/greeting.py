"""Greetings for the demo app."""


def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"
