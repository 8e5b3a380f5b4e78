import Foundation
import Imaging
import LedeBasics
import Wikimedia

/// The share card ("Share as image", seed 000): 512×291 points — the reader's selection (or the article's first
/// sentence), a short rule and the title, the lead image cover-cropped into its half with a fade towards the text,
/// the Wikipedia wordmark with its line (lede-share-made-with), and the licences of the text and of the image. Mirrored
/// for a right-to-left text. Pure: the same content and scale always give the same pixels.
enum ShareCard {
    static let widthPoints = 512, heightPoints = 291
    /// The most characters of a selection a card takes.
    static let maxTextCharacters = 500
    static let scales = 2...3

    struct Content: Sendable {
        var text: String
        var title: String
        var language: String
        var image: RGBImage?
        /// `CC BY-SA 4.0`, as Wikipedia's text is licensed.
        var textLicense = "CC BY-SA 4.0"
        var imageLicense: String?
        var imageAuthor: String?
        /// The language of the card's own words (the wordmark's line, the licences): the article's, variant included.
        var wordsLanguage: String? = nil
    }

    static let ink = RGB(hex: 0x202122), secondary = RGB(hex: 0x54595D), rule = RGB(hex: 0xA2A9B1), muted = RGB(hex: 0x72777D)
    /// The selection's sizes, largest first: the largest whose lines fit in 60 % of the card's height.
    static let textSizes: [Double] = [26, 23, 20, 18, 16, 14, 12]

    static func render(_ c: Content, scale: Int, typesetter t: Typesetter) -> RGBImage {
        let s = Double(scale)
        let W = widthPoints * scale, H = heightPoints * scale
        var canvas = Canvas(width: W, height: H, background: .white)
        let rtl = TextDirection.isRightToLeft(c.text)
        let half = W / 2
        // The image's half (the right one; the left for right-to-left text), faded towards the text.
        if let image = c.image {
            let rect = PixelRect(x: rtl ? 0 : half, y: 0, width: W - half, height: H)
            canvas.drawCover(image, in: rect)
            let fadeWidth = Int(56 * s)
            if rtl {
                canvas.fade(PixelRect(x: half - fadeWidth, y: 0, width: fadeWidth, height: H), .white, from: 0, to: 1)
            } else {
                canvas.fade(PixelRect(x: half, y: 0, width: fadeWidth, height: H), .white, from: 1, to: 0)
            }
        }
        let margin = 24 * s
        // The text's area: the other half, less the margin and a gap before the image; the whole width without one.
        let areaLeft = c.image != nil && rtl ? Double(half) + 12 * s : margin
        let areaWidth = c.image != nil ? Double(half) - 12 * s - margin : Double(W) - 2 * margin
        canvas.clip = PixelRect(x: Int(areaLeft), y: 0, width: Int(areaWidth.rounded(.up)), height: H)

        // The selection: the largest size whose lines fit in 60 % of the height (as the app steps its font down).
        let maxTextHeight = Double(H) * 0.6 - margin
        var quote = t.layout(c.text, style: TextStyle(size: textSizes[0] * s, color: ink, leading: 1.3), maxWidth: areaWidth, maxLines: .max, language: c.language)
        for size in textSizes {
            let style = TextStyle(size: size * s, color: ink, leading: 1.3)
            let lines = max(1, Int(maxTextHeight / (style.size * style.leading)))
            quote = t.layout(c.text, style: style, maxWidth: areaWidth, maxLines: lines, language: c.language)
            if !quote.truncated { break }
        }
        var y = margin
        t.draw(quote, on: &canvas, left: areaLeft, top: y, width: areaWidth)
        y += quote.height + 10 * s
        // The short rule, then the title.
        let ruleWidth = 32 * s
        canvas.fill(PixelRect(x: Int(rtl ? areaLeft + areaWidth - ruleWidth : areaLeft), y: Int(y), width: Int(ruleWidth), height: Int(2 * s)), rule)
        y += 2 * s + 8 * s
        let title = t.layout(c.title, style: TextStyle(size: 16 * s, bold: true, color: ink, leading: 1.3), maxWidth: areaWidth, maxLines: 2, language: c.language)
        t.draw(title, on: &canvas, left: areaLeft, top: y, width: areaWidth, alignRight: rtl)

        // The wordmark line and the licence line, at the bottom, on the text's side.
        let words = c.wordsLanguage ?? c.language
        let m = Messages.shared
        let credit = [c.imageLicense, c.imageAuthor].compactMap { $0 }.joined(separator: ", ")
        let licence = m.text(.shareTextLicence, in: words, c.textLicense) + (c.image == nil ? "" : " · " + m.text(.shareImageCredit, in: words, credit))
        let licenceBlock = t.layout(licence, style: TextStyle(size: 8 * s, color: muted, leading: 1.2), maxWidth: areaWidth, maxLines: 1)
        let licenceTop = Double(H) - margin * 0.75 - licenceBlock.height
        let wordmark = t.layout("Wikipedia", style: TextStyle(size: 15 * s, serif: true, color: ink, leading: 1.2), maxWidth: areaWidth, maxLines: 1)
        let made = t.layout(m.text(.shareMadeWith, in: words), style: TextStyle(size: 8.5 * s, color: secondary, leading: 1.2), maxWidth: areaWidth, maxLines: 1)
        let wordTop = licenceTop - 6 * s - wordmark.height
        let wordWidth = wordmark.lines.first?.width ?? 0, madeWidth = made.lines.first?.width ?? 0
        let lineWidth = wordWidth + 8 * s + madeWidth
        let start = rtl ? areaLeft + areaWidth - lineWidth : areaLeft
        t.draw(wordmark, on: &canvas, left: start, top: wordTop, width: wordWidth)
        t.draw(made, on: &canvas, left: start + wordWidth + 8 * s, top: wordTop + wordmark.height - made.height - 2 * s, width: madeWidth)
        let licenceWidth = licenceBlock.lines.first?.width ?? 0
        t.draw(licenceBlock, on: &canvas, left: rtl ? areaLeft + areaWidth - licenceWidth : areaLeft, top: licenceTop, width: licenceWidth)
        return canvas.image
    }

    // MARK: - The text

    /// The article's first sentence: up to the first full stop (`.`, `。`, `।`, `؟`…) that ends a sentence — followed by
    /// a space or the end, not after a single capital (`J. R. R.`) or a number — or the whole lead paragraph.
    static func firstSentence(_ extract: String) -> String {
        let text = extract.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? extract
        let chars = Array(text)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if "。！？।؟".contains(c) { return String(chars[0...i]).trimmingCharacters(in: .whitespaces) }
            if ".!?".contains(c), i + 1 == chars.count || chars[i + 1] == " " {
                let before = i >= 2 ? chars[i - 2] : " "
                let previous = i >= 1 ? chars[i - 1] : " "
                let initial = previous.isUppercase && (before == " " || before == ".")
                if !initial, !previous.isNumber, i > 20 { return String(chars[0...i]).trimmingCharacters(in: .whitespaces) }
            }
            i += 1
        }
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// A selection as the card takes it: spaces and line ends collapsed; nil when longer than 500 characters (Unicode
    /// scalars, as JSON Schema's `maxLength` counts them, before anything is collapsed).
    static func selection(_ raw: String) -> String? {
        guard raw.unicodeScalars.count <= maxTextCharacters else { return nil }
        return visible(raw).split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// Text as the card and the page show it, in the text and in every tag: without the bidirectional controls
    /// (embeddings, overrides and isolates U+202A–U+202E, U+2066–U+2069; the marks U+200E, U+200F, U+061C), which let a
    /// selection or an upstream title reorder what is around it, and without invisible format characters (U+200B,
    /// U+2060–U+2064, U+FEFF, U+180E). The joiners U+200C and U+200D stay: Persian, Indic scripts and emoji need them.
    static func visible(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isHidden) else { return s }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: s.unicodeScalars.lazy.filter { !isHidden($0) })
        return String(out)
    }

    static func isHidden(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x200B, 0x2060...0x2064, 0xFEFF, 0x180E: return true
        default: return false
        }
    }
}
