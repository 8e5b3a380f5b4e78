import CFreeType
import CHarfBuzz
import Foundation
import Synchronization

/// One face of a font file (a `.ttc` holds several).
public struct FontFile: Sendable, Hashable {
    public var path: String
    public var index: Int
    public init(path: String, index: Int = 0) { self.path = path; self.index = index }
}

/// Which font files draw which text: Noto Sans for Latin, Greek and Cyrillic, then a file per script (Arabic, Hebrew,
/// Devanagari, CJK…) tried in order for a character the ones before lack, each with its bold where one is installed,
/// and Noto Serif for the wordmark. Found in Debian's Noto directories (fonts-noto-core, fonts-noto-cjk).
public struct FontCatalog: Sendable {
    public var regular: [FontFile]
    public var boldOf: [FontFile: FontFile]
    public var serif: FontFile?

    public static let directories = ["/usr/share/fonts/truetype/noto", "/usr/share/fonts/opentype/noto"]

    /// The scripts tried first, in this order, before every other Noto Sans file (sorted by name).
    static let preferred = ["NotoSans-Regular.ttf", "NotoSansArabic-Regular.ttf", "NotoSansHebrew-Regular.ttf", "NotoSansDevanagari-Regular.ttf",
                            "NotoSansBengali-Regular.ttf", "NotoSansTamil-Regular.ttf", "NotoSansTelugu-Regular.ttf", "NotoSansThai-Regular.ttf",
                            "NotoSansGeorgian-Regular.ttf", "NotoSansArmenian-Regular.ttf", "NotoSansEthiopic-Regular.ttf",
                            "NotoSansCJK-Regular.ttc", "NotoSansSymbols-Regular.ttf", "NotoSansSymbols2-Regular.ttf", "NotoSansMath-Regular.ttf"]

    /// The catalog of the fonts installed in `directories`; nil when Noto Sans itself is missing. `cjkFace` picks the
    /// face of the CJK collection (0 Japanese, 1 Korean, 2 Simplified Chinese, 3 Traditional Chinese).
    public static func discover(directories: [String] = directories, cjkFace: Int = 0) -> FontCatalog? {
        var byName: [String: String] = [:]
        for dir in directories {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] where byName[name] == nil { byName[name] = dir + "/" + name }
        }
        guard byName["NotoSans-Regular.ttf"] != nil else { return nil }
        var names = preferred.filter { byName[$0] != nil }
        names += byName.keys.filter { $0.hasPrefix("NotoSans") && $0.hasSuffix("-Regular.ttf") && !names.contains($0) && !$0.contains("Mono") }.sorted()
        var regular: [FontFile] = [], bold: [FontFile: FontFile] = [:]
        for name in names {
            let file = FontFile(path: byName[name]!, index: name.hasSuffix(".ttc") ? cjkFace : 0)
            regular.append(file)
            let boldName = name.replacingOccurrences(of: "-Regular.", with: "-Bold.")
            if let b = byName[boldName] { bold[file] = FontFile(path: b, index: file.index) }
        }
        return FontCatalog(regular: regular, boldOf: bold, serif: byName["NotoSerif-Regular.ttf"].map { FontFile(path: $0) })
    }
}

/// How a block of text is drawn.
public struct TextStyle: Sendable {
    public var size: Double
    public var bold = false
    public var serif = false
    public var color: RGB
    /// Line height as a multiple of the size.
    public var leading = 1.4
    public init(size: Double, bold: Bool = false, serif: Bool = false, color: RGB, leading: Double = 1.4) {
        self.size = size; self.bold = bold; self.serif = serif; self.color = color; self.leading = leading
    }
}

/// Text shaped and broken into lines, ready to draw.
public struct TextBlock: Sendable {
    public struct Glyph: Sendable { var face: FontFile; var id: UInt32; var x: Double; var y: Double }
    public struct Line: Sendable { public var glyphs: [Glyph]; public var width: Double }
    public var lines: [Line]
    public var style: TextStyle
    public var rightToLeft: Bool
    /// Some text did not fit: the last line ends with an ellipsis.
    public var truncated: Bool
    public var lineHeight: Double { style.size * style.leading }
    public var height: Double { Double(lines.count) * lineHeight }
}

/// Shapes text with HarfBuzz over FreeType faces and draws it: a font per run of characters (the first file of the
/// catalog that has them: no missing-glyph boxes — a character no font has, an emoji among them, is left out), right to
/// left for Arabic and Hebrew with the runs of a line in visual order, lines broken between words (and between CJK
/// characters, never before closing punctuation). Not thread-safe: one thread uses one, taken from a
/// `TypesetterPool`.
public final class Typesetter {
    let catalog: FontCatalog
    private var library: OpaquePointer?
    private final class Face {
        let face: FT_Face
        let font: OpaquePointer
        var size = 0.0
        init(face: FT_Face, font: OpaquePointer) { self.face = face; self.font = font }
    }
    private var faces: [FontFile: Face] = [:]
    private var missing: Set<FontFile> = []
    /// The font file for a character, as found (nil: no font has it).
    private var coverage: [UInt32: FontFile?] = [:]
    private struct GlyphKey: Hashable { var face: FontFile; var id: UInt32; var size: Double }
    private struct Bitmap { var left: Int; var top: Int; var width: Int; var rows: Int; var pixels: [UInt8] }
    private var bitmaps: [GlyphKey: Bitmap] = [:]

    public init(catalog: FontCatalog) {
        self.catalog = catalog
        FT_Init_FreeType(&library)
    }

    deinit {
        for f in faces.values { hb_font_destroy(f.font); FT_Done_Face(f.face) }
        FT_Done_FreeType(library)
    }

    private func face(_ file: FontFile) -> Face? {
        if let f = faces[file] { return f }
        guard !missing.contains(file), library != nil else { return nil }
        var ft: FT_Face?
        guard FT_New_Face(library, file.path, FT_Long(file.index), &ft) == 0, let ft, let font = hb_ft_font_create_referenced(ft) else {
            missing.insert(file)
            return nil
        }
        let f = Face(face: ft, font: font)
        faces[file] = f
        return f
    }

    private func sized(_ file: FontFile, _ size: Double) -> Face? {
        guard let f = face(file) else { return nil }
        if f.size != size {
            FT_Set_Char_Size(f.face, 0, FT_F26Dot6((size * 64).rounded()), 72, 72)
            hb_ft_font_changed(f.font)
            f.size = size
        }
        return f
    }

    /// The regular font file that has `scalar`, the one of the run going on first.
    private func fileFor(_ scalar: UInt32, current: FontFile?) -> FontFile? {
        if let current, let f = face(current), FT_Get_Char_Index(f.face, FT_ULong(scalar)) != 0, !Script.isLetter(scalar) || Script.sameScript(scalar, current) {
            return current
        }
        if let known = coverage[scalar] { return known }
        var found: FontFile?
        for file in catalog.regular {
            if let f = face(file), FT_Get_Char_Index(f.face, FT_ULong(scalar)) != 0 { found = file; break }
        }
        coverage[scalar] = found
        return found
    }

    // MARK: - Layout

    /// A word (or a CJK character) with what follows it: the unit lines break between.
    private struct Unit {
        var runs: [(file: FontFile, scalars: [UInt32], rtl: Bool)]
        var spaceAfter = false
        var newlineAfter = false
        var direction: Script.Direction = .neutral
        var glyphs: [TextBlock.Glyph] = []
        var width = 0.0
    }

    /// `text` laid out in lines of at most `maxWidth` pixels, at most `maxLines` of them (the last one cut with an
    /// ellipsis when the text is longer).
    public func layout(_ text: String, style: TextStyle, maxWidth: Double, maxLines: Int, language: String? = nil) -> TextBlock {
        let scalars = text.unicodeScalars.map(\.value)
        var units = segment(scalars, style: style)
        let paragraphRTL = Script.firstStrongIsRTL(scalars)
        for i in units.indices { shape(&units[i], style: style, language: language) }
        let space = advance(of: [0x20], style: style, language: language)
        var lines: [[Int]] = [[]]
        var widths: [Double] = [0]
        for (i, unit) in units.enumerated() {
            let w = widths[widths.count - 1]
            let gap = lines[lines.count - 1].isEmpty ? 0 : (units[i - 1].spaceAfter ? space : 0)
            if !lines[lines.count - 1].isEmpty, w + gap + unit.width > maxWidth {
                lines.append([i]); widths.append(unit.width)
            } else {
                lines[lines.count - 1].append(i); widths[widths.count - 1] = w + gap + unit.width
            }
            if unit.newlineAfter { lines.append([]); widths.append(0) }
        }
        while lines.count > 1, lines[lines.count - 1].isEmpty { lines.removeLast(); widths.removeLast() }
        var truncated = false
        if lines.count > maxLines {
            truncated = true
            lines.removeLast(lines.count - max(1, maxLines)); widths.removeLast(widths.count - lines.count)
            var ellipsis = Unit(runs: [])
            let file = fileFor(0x2026, current: nil) ?? catalog.regular[0]
            ellipsis.runs = [(file, [0x2026], false)]
            shape(&ellipsis, style: style, language: language)
            var last = lines[lines.count - 1]
            func width(_ ids: [Int]) -> Double {
                ids.enumerated().reduce(0.0) { sum, e in sum + units[e.element].width + (e.offset > 0 && units[ids[e.offset - 1]].spaceAfter ? space : 0) }
            }
            while last.count > 1, width(last) + ellipsis.width > maxWidth { last.removeLast() }
            units.append(ellipsis)
            last.append(units.count - 1)
            units[units.count - 2].spaceAfter = false
            lines[lines.count - 1] = last
        }
        var out: [TextBlock.Line] = []
        for ids in lines {
            out.append(place(ids, units: units, space: space, paragraphRTL: paragraphRTL))
        }
        return TextBlock(lines: out, style: style, rightToLeft: paragraphRTL, truncated: truncated)
    }

    /// The units of a line in visual order, their glyphs at x from the line's left.
    private func place(_ ids: [Int], units: [Unit], space: Double, paragraphRTL: Bool) -> TextBlock.Line {
        // Direction of each unit: its own, or the paragraph's for neutral ones (spaces, digits, punctuation).
        func rtl(_ i: Int) -> Bool {
            switch units[i].direction { case .rtl: return true; case .ltr: return false; case .neutral: return paragraphRTL }
        }
        var groups: [(rtl: Bool, ids: [Int])] = []
        for i in ids {
            if let last = groups.last, last.rtl == rtl(i) { groups[groups.count - 1].ids.append(i) } else { groups.append((rtl(i), [i])) }
        }
        if paragraphRTL { groups.reverse() }
        var visual: [Int] = []
        for g in groups { visual += g.rtl ? g.ids.reversed() : g.ids }
        var glyphs: [TextBlock.Glyph] = []
        var x = 0.0
        for (n, i) in visual.enumerated() {
            if n > 0 {
                // The space between two units belongs to the logically first of them.
                let a = visual[n - 1], b = i
                let first = (ids.firstIndex(of: a) ?? 0) < (ids.firstIndex(of: b) ?? 0) ? a : b
                if units[first].spaceAfter { x += space }
            }
            for g in units[i].glyphs { glyphs.append(TextBlock.Glyph(face: g.face, id: g.id, x: x + g.x, y: g.y)) }
            x += units[i].width
        }
        return TextBlock.Line(glyphs: glyphs, width: x)
    }

    private func regularOrBold(_ file: FontFile, _ style: TextStyle) -> FontFile {
        if style.serif, let serif = catalog.serif, file == catalog.regular.first { return serif }
        return style.bold ? catalog.boldOf[file] ?? file : file
    }

    /// Words and CJK characters, each split into runs by font; characters no font has left out.
    private func segment(_ scalars: [UInt32], style: TextStyle) -> [Unit] {
        var units: [Unit] = []
        var current = Unit(runs: [])
        func close() {
            if !current.runs.isEmpty { units.append(current) } else if current.newlineAfter, !units.isEmpty { units[units.count - 1].newlineAfter = true }
            current = Unit(runs: [])
        }
        for s in scalars {
            if s == 0x0A || s == 0x2029 { current.newlineAfter = true; close(); continue }
            if s == 0x20 || s == 0x09 || s == 0x3000 || s == 0x0D {
                if !current.runs.isEmpty { current.spaceAfter = true; close() } else if let last = units.indices.last { units[last].spaceAfter = true }
                continue
            }
            if Script.isCJK(s), !current.runs.isEmpty, !Script.noBreakBefore(s) { close() }
            if Script.noBreakBefore(s), current.runs.isEmpty, !units.isEmpty {
                current = units.removeLast()   // closing punctuation stays with what it closes
            }
            let joiner = Script.isDefaultIgnorable(s)
            let last = current.runs.last?.file
            let file: FontFile?
            if joiner { file = last } else { file = fileFor(s, current: last) }
            guard let file else { continue }   // no font has it: left out (never a missing-glyph box)
            let isRTL = Script.isRTL(s)
            if let l = current.runs.indices.last, current.runs[l].file == file, joiner || !Script.isLetter(s) || current.runs[l].rtl == isRTL {
                current.runs[l].scalars.append(s)
            } else {
                current.runs.append((file, [s], isRTL))
            }
            if Script.isLetter(s) || Script.isCJK(s) {
                let d: Script.Direction = isRTL ? .rtl : .ltr
                if current.direction == .neutral { current.direction = d }
            }
            if Script.isCJK(s) { close() }   // a line may break after any CJK character
        }
        close()
        return units
    }

    /// Shapes each run of the unit; the unit's glyphs at x from its left, its runs in visual order.
    private func shape(_ unit: inout Unit, style: TextStyle, language: String?) {
        var shaped: [(glyphs: [TextBlock.Glyph], width: Double)] = []
        for run in unit.runs {
            let file = regularOrBold(run.file, style)
            guard let face = sized(file, style.size) ?? sized(run.file, style.size) else { continue }
            let used = faces[file] === face ? file : run.file
            guard let buffer = hb_buffer_create() else { continue }
            defer { hb_buffer_destroy(buffer) }
            run.scalars.withUnsafeBufferPointer { hb_buffer_add_codepoints(buffer, $0.baseAddress, Int32($0.count), 0, Int32($0.count)) }
            hb_buffer_guess_segment_properties(buffer)
            hb_buffer_set_direction(buffer, run.rtl ? HB_DIRECTION_RTL : HB_DIRECTION_LTR)
            if let language { hb_buffer_set_language(buffer, hb_language_from_string(language, -1)) }
            hb_shape(face.font, buffer, nil, 0)
            var count: UInt32 = 0
            guard let infos = hb_buffer_get_glyph_infos(buffer, &count), let positions = hb_buffer_get_glyph_positions(buffer, &count) else { continue }
            var glyphs: [TextBlock.Glyph] = []
            var x = 0.0
            for i in 0..<Int(count) {
                let p = positions[i]
                glyphs.append(TextBlock.Glyph(face: used, id: infos[i].codepoint, x: x + Double(p.x_offset) / 64, y: Double(p.y_offset) / 64))
                x += Double(p.x_advance) / 64
            }
            shaped.append((glyphs, x))
        }
        if unit.direction == .rtl { shaped.reverse() }
        var x = 0.0
        unit.glyphs = []
        for s in shaped {
            for g in s.glyphs { unit.glyphs.append(TextBlock.Glyph(face: g.face, id: g.id, x: x + g.x, y: g.y)) }
            x += s.width
        }
        unit.width = x
    }

    private func advance(of scalars: [UInt32], style: TextStyle, language: String?) -> Double {
        var u = Unit(runs: [(catalog.regular[0], scalars, false)])
        shape(&u, style: style, language: language)
        return u.width
    }

    // MARK: - Drawing

    /// Draws `block` with its first line's top at `top`, each line aligned to the start edge of [`left`, `left + width`]
    /// (the right edge for right-to-left text).
    /// `alignRight` overrides the text's own start edge (a Latin title on a right-to-left card).
    public func draw(_ block: TextBlock, on canvas: inout Canvas, left: Double, top: Double, width: Double, alignRight: Bool? = nil) {
        let size = block.style.size
        let ascent = size * 1.0 + (block.style.leading - 1.2) * size / 2
        for (n, line) in block.lines.enumerated() {
            let baseline = top + Double(n) * block.lineHeight + ascent
            let start = alignRight ?? block.rightToLeft ? left + width - line.width : left
            for g in line.glyphs {
                guard let bitmap = bitmap(g.face, g.id, size) else { continue }
                let x = Int((start + g.x).rounded()) + bitmap.left
                let y = Int((baseline - g.y).rounded()) - bitmap.top
                bitmap.pixels.withUnsafeBufferPointer { p in
                    canvas.blend(mask: p, maskWidth: bitmap.width, rows: bitmap.rows, pitch: bitmap.width, x: x, y: y, color: block.style.color)
                }
            }
        }
    }

    /// A glyph's anti-aliased coverage, rendered once per face, glyph and size.
    private func bitmap(_ file: FontFile, _ id: UInt32, _ size: Double) -> Bitmap? {
        let key = GlyphKey(face: file, id: id, size: size)
        if let b = bitmaps[key] { return b }
        guard let f = sized(file, size), FT_Load_Glyph(f.face, id, FT_Int32(FT_LOAD_DEFAULT)) == 0,
              let slot = f.face.pointee.glyph, FT_Render_Glyph(slot, FT_RENDER_MODE_NORMAL) == 0 else { return nil }
        let bm = slot.pointee.bitmap
        var pixels = [UInt8](repeating: 0, count: Int(bm.width) * Int(bm.rows))
        if bm.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue), let buffer = bm.buffer {
            for r in 0..<Int(bm.rows) {
                for c in 0..<Int(bm.width) { pixels[r * Int(bm.width) + c] = buffer[r * Int(bm.pitch) + c] }
            }
        }
        let b = Bitmap(left: Int(slot.pointee.bitmap_left), top: Int(slot.pointee.bitmap_top), width: Int(bm.width), rows: Int(bm.rows), pixels: pixels)
        if bitmaps.count > 4_096 { bitmaps.removeAll(keepingCapacity: true) }
        bitmaps[key] = b
        return b
    }
}

/// Typesetters for the render threads: one is taken for a render and given back (FreeType's faces are not shared
/// between threads). At most as many exist as ever ran at once.
public final class TypesetterPool: Sendable {
    public let catalog: FontCatalog
    private let idle = Mutex<[UncheckedTypesetter]>([])
    /// @unchecked: a typesetter is used by the one thread that took it from the pool until it gives it back.
    private struct UncheckedTypesetter: @unchecked Sendable { let value: Typesetter }

    public init(catalog: FontCatalog) { self.catalog = catalog }

    public func with<T>(_ body: (Typesetter) throws -> T) rethrows -> T {
        let t = idle.withLock { $0.popLast() }?.value ?? Typesetter(catalog: catalog)
        defer { idle.withLock { $0.append(UncheckedTypesetter(value: t)) } }
        return try body(t)
    }
}

/// A text's direction, as the typesetter lays it out.
public enum TextDirection {
    /// Whether `text` reads right to left: its first strong character (a letter) is Arabic, Hebrew or of another
    /// right-to-left script.
    public static func isRightToLeft(_ text: String) -> Bool { Script.firstStrongIsRTL(text.unicodeScalars.map(\.value)) }
}

/// The character classes layout needs (by code point ranges: Swift exposes no bidirectional class).
enum Script {
    enum Direction { case ltr, rtl, neutral }

    static func isRTL(_ s: UInt32) -> Bool {
        (0x0590...0x08FF).contains(s) || (0xFB1D...0xFDFF).contains(s) || (0xFE70...0xFEFF).contains(s)
            || (0x10800...0x10FFF).contains(s) || (0x1E800...0x1EFFF).contains(s)
    }

    static func isLetter(_ s: UInt32) -> Bool {
        guard let u = Unicode.Scalar(s) else { return false }
        return u.properties.isAlphabetic
    }

    static func isCJK(_ s: UInt32) -> Bool {
        (0x2E80...0x2FDF).contains(s) || (0x3001...0x30FF).contains(s) || (0x3400...0x4DBF).contains(s) || (0x4E00...0x9FFF).contains(s)
            || (0xF900...0xFAFF).contains(s) || (0xFF01...0xFF60).contains(s) || (0x20000...0x3FFFF).contains(s)
    }

    /// Closing punctuation a line never starts with (Japanese and Chinese line-breaking rules, in short).
    static func noBreakBefore(_ s: UInt32) -> Bool {
        [0x3001, 0x3002, 0xFF0C, 0xFF0E, 0xFF1A, 0xFF1B, 0xFF01, 0xFF1F, 0xFF09, 0x300D, 0x300F, 0x3011, 0x3009, 0x300B, 0x3015, 0xFF3D, 0xFF5D,
         0x30FC, 0x2026, 0x3005, 0x309D, 0x309E, 0x30FD, 0x30FE].contains(s)
    }

    static func isDefaultIgnorable(_ s: UInt32) -> Bool {
        guard let u = Unicode.Scalar(s) else { return false }
        return u.properties.isDefaultIgnorableCodePoint || (0x0300...0x036F).contains(s) || u.properties.generalCategory == .nonspacingMark
    }

    static func firstStrongIsRTL(_ scalars: [UInt32]) -> Bool {
        for s in scalars where isLetter(s) { return isRTL(s) }
        return false
    }

    /// Whether a letter is of the script a font file is for (a run keeps its font only for its own script's letters).
    static func sameScript(_ s: UInt32, _ file: FontFile) -> Bool {
        let name = (file.path as NSString).lastPathComponent
        if isRTL(s) { return name.contains("Arabic") || name.contains("Hebrew") || !name.hasPrefix("NotoSans-") }
        if isCJK(s) { return name.contains("CJK") }
        if s < 0x0590 { return name.hasPrefix("NotoSans-") || name.hasPrefix("NotoSerif-") }
        return !name.hasPrefix("NotoSans-")
    }
}
