package report

// MaxShardITL lets tests lower the bound on a shard's ITL samples.
var MaxShardITL = &maxShardITL
