"""The front ends read on their own: the wire's messages, without a relay."""
