import Foundation
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// Numbers written without Foundation's formatter must be the very text it wrote.
final class TextFormatTests: XCTestCase {
    func testPaddedMatchesPrintf() {
        for n in [0, 7, 10, 99, 2026, 12345, -3] {
            XCTAssertEqual(TextFormat.padded(n, 2), String(format: "%02d", n))
            XCTAssertEqual(TextFormat.padded(n, 4), String(format: "%04d", n))
        }
        XCTAssertEqual(FeedDate(year: 2026, month: 1, day: 5)!.description, "2026-01-05")
        XCTAssertEqual(FeedDate(year: 812, month: 11, day: 20)!.pathComponent, "0812/11/20")
    }

    func testFixedAndCoordinatesMatchPrintfForRandomAndEdgeValues() {
        var rng = SystemRandomNumberGenerator()
        var values: [Double] = [0, -0.0, 1, -1, 0.5, 52.3547498, 4.8339215, -33.8567844, 151.2152967, 180, -180, 90, -90,
                                0.00000005, -0.00000004, 1e-9, 12.34567895, 0.1 + 0.2, 179.99999995, -0.000000049]
        for _ in 0..<20_000 { values.append(Double.random(in: -180...180, using: &rng)) }
        for _ in 0..<2_000 { values.append((Double(Int.random(in: -1_800_000_000...1_800_000_000, using: &rng)) + 0.5) / 1e7) }
        for v in values {
            XCTAssertEqual(TextFormat.fixed(v, digits: 7), String(format: "%.7f", v), "\(v)")
            XCTAssertEqual(TextFormat.fixed(v, digits: 4), String(format: "%.4f", v), "\(v)")
            var reference = String(format: "%.7f", v)
            while reference.hasSuffix("0") { reference.removeLast() }
            if reference.hasSuffix(".") { reference.removeLast() }
            if reference == "-0" { reference = "0" }
            XCTAssertEqual(Coordinates.format(v), reference, "\(v)")
        }
    }
}
