package semconv

// A set of names or codes, read-only after package initialisation.
type (
	Names map[string]struct{}
	Codes map[int]struct{}
)

func set(names ...string) Names {
	s := make(Names, len(names))
	for _, name := range names {
		s[name] = struct{}{}
	}
	return s
}

func codes(values ...int) Codes {
	s := make(Codes, len(values))
	for _, value := range values {
		s[value] = struct{}{}
	}
	return s
}

// Has reports whether name is in the set.
func (s Names) Has(name string) bool { _, ok := s[name]; return ok }

// Has reports whether code is in the set.
func (s Codes) Has(code int) bool { _, ok := s[code]; return ok }
