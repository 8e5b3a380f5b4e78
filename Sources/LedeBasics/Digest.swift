/// A 128-bit digest of a text under this process's random key (two SipHash runs with different salts): for keys a
/// client chooses (a share card's selection) or must not be kept as they are (credentials). Not stable across runs.
public enum Digest {
    public static func hex128(_ text: String) -> String {
        var a = Hasher(), b = Hasher()
        a.combine(0x6c656465 as UInt32); a.combine(text)
        b.combine(0x75736572 as UInt32); b.combine(text)
        return String(UInt64(bitPattern: Int64(a.finalize())), radix: 16) + "-" + String(UInt64(bitPattern: Int64(b.finalize())), radix: 16)
    }
}
