/// Coordinates written for upstream and for links: at most 7 decimals, never an exponent, `-0` as `0`.
public enum Coordinates {
    public static func format(_ value: Double) -> String { TextFormat.trimmedFixed(value, digits: 7) }
}
