import Foundation
import LedeBasics
import Wikimedia
import Upstream

/// Embedded Reddit listings, in the real `top.json` shape. Keywords: `cats` and `EarthPorn` (image posts mixed
/// with text, video and NSFW posts), `AskReddit` (text posts only), `nsfw_pics` (image posts, all NSFW). Any other
/// subreddit answers 404 like Reddit does for one that does not exist.
final class EmbeddedRedditTransport: UpstreamTransport, Sendable {
    init() {}

    /// Reddit's origin, as the live transport's (the guard and metrics name its calls by it).
    func baseURL(lang: String) -> String { "https://www.reddit.com" }

    func send(_ request: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
        let parts = request.path.split(separator: "/")
        guard parts.count == 3, parts[0] == "r", parts[2] == "top.json", let posts = Self.subreddits[parts[1].lowercased()] else {
            return UpstreamResponse(status: 404, body: Array("{\"message\": \"Not Found\", \"error\": 404}".utf8))
        }
        let listing = RedditListing(kind: "Listing", data: .init(children: posts.map { .init(kind: "t3", data: $0) }))
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return UpstreamResponse(status: 200, body: [UInt8]((try? e.encode(listing)) ?? Data()))
    }

    static func image(_ id: String, _ title: String, author: String, sub: String, nsfw: Bool = false) -> RedditListing.Post {
        let base = "https://preview.redd.it/\(id).jpg?auto=webp&amp;s=\(String(id.reversed()))"
        let res = [108, 216, 320, 640, 960].map { w in RedditListing.Image(url: "https://preview.redd.it/\(id).jpg?width=\(w)&amp;crop=smart&amp;auto=webp&amp;s=\(id)\(w)", width: w, height: w * 3 / 4) }
        return RedditListing.Post(id: id, title: title, author: author, permalink: "/r/\(sub)/comments/\(id)/\(title.lowercased().prefix(24).replacingOccurrences(of: " ", with: "_"))/",
                                  url: "https://i.redd.it/\(id).jpg", over18: nsfw, postHint: "image", isVideo: false, isSelf: false,
                                  preview: .init(images: [.init(source: .init(url: base, width: 3024, height: 2268), resolutions: res)]))
    }

    static func text(_ id: String, _ title: String, sub: String) -> RedditListing.Post {
        RedditListing.Post(id: id, title: title, author: "curious_\(id)", permalink: "/r/\(sub)/comments/\(id)/q/", url: "https://www.reddit.com/r/\(sub)/comments/\(id)/q/",
                           over18: false, postHint: "self", isVideo: false, isSelf: true, preview: nil)
    }

    static func video(_ id: String, _ title: String, sub: String) -> RedditListing.Post {
        RedditListing.Post(id: id, title: title, author: "filmer", permalink: "/r/\(sub)/comments/\(id)/v/", url: "https://v.redd.it/\(id)",
                           over18: false, postHint: "hosted:video", isVideo: true, isSelf: false,
                           preview: .init(images: [.init(source: .init(url: "https://external-preview.redd.it/\(id).png?format=pjpg&amp;s=1", width: 1280, height: 720), resolutions: [])]))
    }

    static let subreddits: [String: [RedditListing.Post]] = [
        "cats": [
            image("1gq2c01", "My cat discovered the heated blanket", author: "whiskers_fan", sub: "cats"),
            image("1gq2c02", "Two brothers, one windowsill", author: "tabbytales", sub: "cats"),
            text("1gq2c03", "How do I get my cat to stop scratching the sofa?", sub: "cats"),
            image("1gq2c04", "She only sleeps in boxes that are too small", author: "boxcat", sub: "cats"),
            video("1gq2c05", "Zoomies at 3am", sub: "cats"),
            image("1gq2c06", "Adopted him today!", author: "newcatowner", sub: "cats"),
            image("1gq2c07", "Not safe for work cat (mislabelled)", author: "trollcat", sub: "cats", nsfw: true),
            image("1gq2c08", "The judge has entered the room", author: "judgy_cat", sub: "cats"),
        ],
        "earthporn": [
            image("1gr7e01", "Lofoten at first light, Norway [OC] [4000x3000]", author: "northbound", sub: "EarthPorn"),
            image("1gr7e02", "Dolomites after the storm, Italy [OC]", author: "alpinist", sub: "EarthPorn"),
            image("1gr7e03", "Sunrise over the Namib [OC]", author: "dunes", sub: "EarthPorn"),
            text("1gr7e04", "Meta: rules update", sub: "EarthPorn"),
            image("1gr7e05", "Moraine Lake, Canada [OC]", author: "glacierblue", sub: "EarthPorn"),
        ],
        "askreddit": [
            text("1gs1a01", "What is a small thing that made your week better?", sub: "AskReddit"),
            text("1gs1a02", "Which film do you rewatch every year?", sub: "AskReddit"),
            text("1gs1a03", "What skill took you longest to learn?", sub: "AskReddit"),
        ],
        "nsfw_pics": [
            image("1gt9n01", "NSFW 1", author: "x", sub: "nsfw_pics", nsfw: true),
            image("1gt9n02", "NSFW 2", author: "y", sub: "nsfw_pics", nsfw: true),
        ],
    ]
}
