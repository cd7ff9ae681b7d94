package config

import (
	"fmt"
	"reflect"
)

// Equal reports whether two configuration values (a whole *Config, or a
// Target, Scenario, Burst, or a slice of them) say the same thing. It is the
// one answer to "did it change?" for reloads, clients and schedules alike.
// Secrets compare by value, so a rotated token is a change. State derived at
// load time (a compiled regexp, a proxy function cached by
// prometheus/common) is not compared: it follows from the fields it was
// derived from, and reflect.DeepEqual would call two identical loads
// different.
func Equal(a, b any) bool {
	return equalValue(reflect.ValueOf(a), reflect.ValueOf(b))
}

func equalValue(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalValue(a.Elem(), b.Elem())
	case reflect.Struct:
		return equalStruct(a, b)
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() || !equalValue(a.MapIndex(k), bv) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.IsNil() == b.IsNil()
	}
	return a.Equal(b) // strings, numbers, booleans
}

// equalStruct compares exported fields. A struct with none (url.Userinfo,
// regexp.Regexp) is compared by its String form where it has one: a proxy
// URL's password lives in such a struct.
func equalStruct(a, b reflect.Value) bool {
	exported := 0
	for i := range a.NumField() {
		if !a.Type().Field(i).IsExported() {
			continue
		}
		exported++
		if !equalValue(a.Field(i), b.Field(i)) {
			return false
		}
	}
	if exported > 0 {
		return true
	}
	sa, okA := stringOf(a)
	sb, okB := stringOf(b)
	return okA == okB && sa == sb
}

func stringOf(v reflect.Value) (string, bool) {
	if v.CanAddr() {
		v = v.Addr()
	}
	if !v.CanInterface() {
		return "", false
	}
	if s, ok := v.Interface().(fmt.Stringer); ok {
		return s.String(), true
	}
	return "", false
}
