package sim

// promptDetails is what the usage says of the prefix cache: nothing without
// one (blocks are hashed only with a cache).
func (s *sequence) promptDetails() *promptDetails {
	if s == nil || s.blocks == nil {
		return nil
	}
	return &promptDetails{CachedTokens: s.cachedTokens}
}
