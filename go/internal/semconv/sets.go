package semconv

import (
	"slices"
	"strconv"
)

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

// sorted lists a set as the cross-language test reads one: by its text.
func sorted(s Names) []string {
	out := make([]string, 0, len(s))
	for name := range s {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func sortedCodes(s Codes) []int {
	out := make([]int, 0, len(s))
	for code := range s {
		out = append(out, code)
	}
	slices.SortFunc(out, func(a, b int) int {
		return compareText(strconv.Itoa(a), strconv.Itoa(b))
	})
	return out
}

func compareText(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
