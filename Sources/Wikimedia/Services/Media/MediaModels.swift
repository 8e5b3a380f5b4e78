import LedeBasics
import Foundation

// The media list (REST `page/media-list`) and file credits (`prop=imageinfo`).

/// One entry of `page/media-list`.
public struct MediaListItem: Sendable, Equatable {
    public var title: String
    public var type: String
    public var showInGallery: Bool
    public var leadImage: Bool
    public var captionHTML: String?
    public var captionText: String?
    /// The 1x `srcset` entry, protocol-relative as upstream sends it.
    public var src: String?
    /// Every `srcset` entry (the sizes the mobile HTML names for this file), as upstream sends them.
    public var srcset: [MediaSource]

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(title: String, type: String, showInGallery: Bool, leadImage: Bool, captionHTML: String? = nil, captionText: String? = nil, src: String? = nil, srcset: [MediaSource] = []) {
        self.title = title
        self.type = type
        self.showInGallery = showInGallery
        self.leadImage = leadImage
        self.captionHTML = captionHTML
        self.captionText = captionText
        self.src = src
        self.srcset = srcset
    }
}

/// One `srcset` entry of a media-list item: a thumbnail's URL (protocol-relative) and its pixel-density scale (`1x`,
/// `1.5x`, `2x`).
public struct MediaSource: Sendable, Equatable {
    public var src: String
    public var scale: String?
    package init(src: String, scale: String?) { self.src = src; self.scale = scale }
}

/// `prop=imageinfo&iiprop=url|size|extmetadata`: one file's sizes and its description page's credits (HTML values).
public struct FileInfo: Sendable, Equatable {
    /// The most files one `fileInfo` call asks about (the Action API's `titles` limit).
    public static let maxPerCall = 50
    public var title: String
    public var url: String?
    public var width: Int?
    public var height: Int?
    public var thumbURL: String?
    public var thumbWidth: Int?
    public var thumbHeight: Int?
    public var descriptionURL: String?
    public var metadata: [String: String]

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(title: String, url: String? = nil, width: Int? = nil, height: Int? = nil, thumbURL: String? = nil, thumbWidth: Int? = nil, thumbHeight: Int? = nil, descriptionURL: String? = nil, metadata: [String: String]) {
        self.title = title
        self.url = url
        self.width = width
        self.height = height
        self.thumbURL = thumbURL
        self.thumbWidth = thumbWidth
        self.thumbHeight = thumbHeight
        self.descriptionURL = descriptionURL
        self.metadata = metadata
    }
}

struct MediaListAnswer: Decodable {
    var items: [MediaListItem]?
    enum CodingKeys: String, CodingKey { case items }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        items = c.lossyList(MediaListItem.self, .items, kind: "media", counter: decoder.skippedItems)
    }
}

extension MediaListItem: Decodable {
    enum CodingKeys: String, CodingKey { case title, type, showInGallery, leadImage, caption, srcset }
    struct Caption: Decodable { var html: String?; var text: String? }
    struct Source: Decodable { var src: String?; var scale: String? }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let title = c.lenientString(.title, nonEmpty: true) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "media item without a title"))
        }
        let caption = c.lenient(Caption.self, .caption)
        let sources = c.lossyList(Source.self, .srcset, kind: "srcset", counter: nil) ?? []
        let src = (sources.first { $0.scale == "1x" } ?? sources.first)?.src
        self.init(title: title, type: c.lenientString(.type) ?? "image", showInGallery: c.lenientBool(.showInGallery) ?? true,
                  leadImage: c.lenientBool(.leadImage) ?? false, captionHTML: caption?.html, captionText: caption?.text, src: src,
                  srcset: sources.compactMap { s in s.src.flatMap { $0.isEmpty ? nil : MediaSource(src: $0, scale: s.scale) } })
    }
}

struct ImageInfoQuery: Decodable {
    var pages: [FileInfo]?
    enum CodingKeys: String, CodingKey { case pages }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pages = c.lossyList(FileInfo.self, .pages, kind: "file", counter: decoder.skippedItems)
    }
}

extension FileInfo: Decodable {
    enum CodingKeys: String, CodingKey { case title, imageinfo }
    struct Info: Decodable {
        var url: String?, width: Int?, height: Int?, thumbURL: String?, thumbWidth: Int?, thumbHeight: Int?, descriptionURL: String?
        var metadata: [String: String] = [:]
        enum CodingKeys: String, CodingKey { case url, width, height, thumburl, thumbwidth, thumbheight, descriptionurl, extmetadata }
        struct Value: Decodable {
            var value: String?
            enum CodingKeys: String, CodingKey { case value }
            /// Values are strings, sometimes numbers or booleans; read as text.
            init(from decoder: Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                value = c.lenientString(.value) ?? c.lenientDouble(.value).map { JSONNumber.text($0) } ?? c.lenientBool(.value).map { $0 ? "true" : "false" }
            }
        }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            url = c.lenientString(.url, nonEmpty: true); width = c.lenientInt(.width); height = c.lenientInt(.height)
            thumbURL = c.lenientString(.thumburl, nonEmpty: true); thumbWidth = c.lenientInt(.thumbwidth); thumbHeight = c.lenientInt(.thumbheight)
            descriptionURL = c.lenientString(.descriptionurl, nonEmpty: true)
            for (k, v) in c.lenient([String: Lossy<Value>].self, .extmetadata) ?? [:] { if let text = v.value?.value { metadata[k] = text } }
        }
    }
    /// Files shared from Commons come as `"missing": true, "known": true` with their imageinfo: kept.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let title = c.lenientString(.title, nonEmpty: true) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "file without a title"))
        }
        let info = (c.lossyList(Info.self, .imageinfo, kind: "imageinfo", counter: nil) ?? []).first
        self.init(title: title, url: info?.url, width: info?.width, height: info?.height, thumbURL: info?.thumbURL, thumbWidth: info?.thumbWidth,
                  thumbHeight: info?.thumbHeight, descriptionURL: info?.descriptionURL, metadata: info?.metadata ?? [:])
    }
}
