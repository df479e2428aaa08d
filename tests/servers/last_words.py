"""A stand-in stdio server that writes one message of ``SIZE`` bytes of data, says on stderr
that it did (its pid), and exits at once: ``python last_words.py SIZE``."""

import json
import os
import sys

size = int(sys.argv[1])
message = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x" * size}}
sys.stdout.buffer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
sys.stdout.flush()
sys.stderr.write(f"{os.getpid()}\n")
sys.stderr.flush()
