import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends upstream requests over HTTP(S) with URLSession: the base URL from the `{lang}` template, the
/// contract's User-Agent, gzip accepted (URLSession asks for and decodes it), a hard per-call deadline (also
/// for hung connections), and a response size cap enforced while bytes arrive. Redirects are returned as they
/// are, with their `Location`: `WikimediaClient` resolves and follows them (RFC 3986 §5), the same way for
/// every transport.
public final class LiveTransport: NSObject, UpstreamTransport, URLSessionDataDelegate, @unchecked Sendable {
    public let template: String
    public let userAgent: String
    public let maxResponseBytes: Int
    private var session: URLSession!
    private let lock = NSLock()
    private var states: [Int: State] = [:]

    private final class State {
        var data = Data()
        var status = 0
        var headers: [String: String] = [:]
        var continuation: CheckedContinuation<UpstreamResponse, Error>?
        init(_ c: CheckedContinuation<UpstreamResponse, Error>) { continuation = c }
    }

    public static let version = "0.1.0"

    /// `template`: e.g. `https://{lang}.wikipedia.org` or `http://127.0.0.1:9000/{lang}`.
    /// `followsRedirects`: let URLSession follow redirects itself (the Reddit client); Wikimedia's client
    /// follows them itself and leaves this off.
    public let followsRedirects: Bool

    public init(template: String, contact: String, maxResponseBytes: Int = 8 << 20, followsRedirects: Bool = false) {
        self.template = template
        self.followsRedirects = followsRedirects
        self.userAgent = "Lede/\(LiveTransport.version) (\(contact))"
        self.maxResponseBytes = maxResponseBytes
        super.init()
        let config = URLSessionConfiguration.ephemeral
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.urlCache = nil
        config.httpCookieStorage = nil
        config.httpShouldSetCookies = false
        config.httpMaximumConnectionsPerHost = 32
        config.timeoutIntervalForRequest = 30
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: config, delegate: self, delegateQueue: queue)
    }

    public func url(for request: UpstreamRequest) -> URL? {
        URL(string: baseURL(lang: request.lang) + request.pathAndQuery)
    }

    public func baseURL(lang: String) -> String { template.replacingOccurrences(of: "{lang}", with: lang) }

    /// The response fields the client acts on.
    static let keptFields: Set<String> = ["location", "retry-after"]

    public func send(_ request: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
        guard let url = url(for: request) else { throw UpstreamError.unavailable(status: 0) }
        var r = URLRequest(url: url)
        r.httpMethod = request.method.rawValue
        r.timeoutInterval = deadline + 1
        r.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        r.setValue("application/json", forHTTPHeaderField: "Accept")
        if let auth = request.authorization { r.setValue(auth, forHTTPHeaderField: "Authorization") }
        if request.method == .post {
            r.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            r.httpBody = Data(UpstreamRequest.formEncode(request.form).utf8)
        }
        let task = session.dataTask(with: r)
        let id = task.taskIdentifier
        return try await withCheckedThrowingContinuation { (c: CheckedContinuation<UpstreamResponse, Error>) in
            lock.lock(); states[id] = State(c); lock.unlock()
            task.resume()
            DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { [weak self, weak task] in
                if self?.finish(id, .failure(UpstreamError.timeout)) == true { task?.cancel() }
            }
        }
    }

    /// Resumes the caller once; returns false if it was already resumed.
    @discardableResult
    private func finish(_ id: Int, _ result: Result<UpstreamResponse, Error>) -> Bool {
        lock.lock()
        guard let state = states.removeValue(forKey: id), let c = state.continuation else { lock.unlock(); return false }
        state.continuation = nil
        lock.unlock()
        c.resume(with: result)
        return true
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                           completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 0
        var headers: [String: String] = [:]
        for (k, v) in http?.allHeaderFields ?? [:] {
            if let name = (k as? String)?.lowercased(), LiveTransport.keptFields.contains(name), let value = v as? String { headers[name] = value }
        }
        lock.lock(); states[dataTask.taskIdentifier]?.status = status; states[dataTask.taskIdentifier]?.headers = headers; lock.unlock()
        if response.expectedContentLength > Int64(maxResponseBytes) {
            finish(dataTask.taskIdentifier, .failure(UpstreamError.tooLarge))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        guard let state = states[dataTask.taskIdentifier] else { lock.unlock(); return }
        state.data.append(data)
        let over = state.data.count > maxResponseBytes
        lock.unlock()
        if over {
            finish(dataTask.taskIdentifier, .failure(UpstreamError.tooLarge))
            dataTask.cancel()
        }
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.lock()
        let state = states[task.taskIdentifier]
        let status = state?.status ?? 0
        let data = state?.data ?? Data()
        let headers = state?.headers ?? [:]
        lock.unlock()
        if let error {
            let code = (error as? URLError)?.code
            finish(task.taskIdentifier, .failure(code == .timedOut ? UpstreamError.timeout : UpstreamError.unavailable(status: 0)))
        } else {
            let status = status == 0 ? ((task.response as? HTTPURLResponse)?.statusCode ?? 0) : status
            finish(task.taskIdentifier, .success(UpstreamResponse(status: status, body: [UInt8](data), headers: headers)))
        }
    }

    /// Unless `followsRedirects`, redirects are not followed here: the 3xx answer, with its `Location`, goes
    /// back to the client.
    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                           newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(followsRedirects ? request : nil)
    }
}
