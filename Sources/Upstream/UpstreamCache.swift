import LedeBasics

/// The cache of upstream answers (keyed by their request's text): `KeyedCache` with string keys.
public typealias UpstreamCache = KeyedCache<String>
