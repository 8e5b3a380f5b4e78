import HTTPServer
import LedeBasics
import Wikimedia

enum FeedRoutes {
    static func register(on router: Router, service: FeedService) {
        router.get("/feed") { ctx in
            let request: FeedRequest
            request = try FeedRequest.parse(ctx.request)
            if JSONLines.preferred(by: ctx.request) {
                return .response(service.stream(request))
            }
            if let warm = service.cachedResponse(for: request) { return .response(warm) }
            return Responses.async { try await service.feed(request) }
        }
    }
}
