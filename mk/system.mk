# System packages: the one place `make` installs anything from Debian (apt-get), from one list.
# `make system` installs the missing ones, all in one apt-get call; `prometheus`, `haproxy` and
# `valgrind` are its old names. Who needs them:
#   prometheus (prometheus, promtool 2.42): the stack tests' rules and alerts (mk/stack.mk)
#   haproxy 2.6: the load balancer in front of proxy replicas (tests/proxy/test_replicas.py,
#     deploy/haproxy/)
#   valgrind: cachegrind counts the benchmark's instructions (make bench)
# Each entry is package:command[,command]: a package is missing when one of its commands is.
SYSTEM_PACKAGES := prometheus:prometheus,promtool haproxy:haproxy valgrind:valgrind
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: system prometheus haproxy valgrind

system:
	@missing=; for entry in $(SYSTEM_PACKAGES); do \
		for command in $$(echo "$${entry#*:}" | tr , ' '); do \
			PATH="$$PATH:/usr/sbin" command -v "$$command" >/dev/null || { missing="$$missing $${entry%%:*}"; break; }; \
		done; \
	done; \
	[ -z "$$missing" ] || { \
		echo ">> installing from Debian:$$missing"; \
		$(SUDO) apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; }

prometheus haproxy valgrind: system
