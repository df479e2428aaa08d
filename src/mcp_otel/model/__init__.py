"""The model every layer shares: what a request is read as (:mod:`.messages`, :mod:`.attributes`,
:mod:`.propagation`, :mod:`.content`), its one lifecycle (:mod:`.lifecycle`), the pure classifier
(:mod:`.classify`), the one writer of status and outcome (:mod:`.outcome`), the duration points
(:mod:`.metrics`), and the settings, fail-open logging and field readers below them
(:mod:`.config`, :mod:`.safety`, :mod:`.fields`). It reads no SDK's shapes and imports nothing
above it: the in-process instrumentation and the proxy both build on it."""
