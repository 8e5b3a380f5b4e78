import HTTPServer
import LedeBasics

extension Coordinate {
    /// Parses `lat` and `lon` query values; nil with a reason when they are not a valid point.
    static func parse(lat: String?, lon: String?) -> Result<Coordinate, Problem> {
        parse(lat: lat.map { parseDecimal($0) }, lon: lon.map { parseDecimal($0) })
    }

    /// The same from values already read as decimals: nil when absent, `.some(nil)` when not a plain decimal.
    static func parse(lat: Double??, lon: Double??) -> Result<Coordinate, Problem> {
        guard let lat, let lon else {
            return .failure(Problem(status: 400, slug: "invalid-coordinates", .problemCoordinatesRequired))
        }
        guard let la = lat else {
            return .failure(Problem(status: 400, slug: "invalid-coordinates", .problemCoordinateNotDecimal, "lat", "52.3547498"))
        }
        guard let lo = lon else {
            return .failure(Problem(status: 400, slug: "invalid-coordinates", .problemCoordinateNotDecimal, "lon", "4.8339215"))
        }
        guard (-90...90).contains(la) else { return .failure(Problem(status: 400, slug: "invalid-coordinates", .problemCoordinateRange, "lat", "-90", "90")) }
        guard (-180...180).contains(lo) else { return .failure(Problem(status: 400, slug: "invalid-coordinates", .problemCoordinateRange, "lon", "-180", "180")) }
        return .success(Coordinate(latitude: la, longitude: lo)!)
    }
}
