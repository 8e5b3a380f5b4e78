import Foundation
import HTTPServer
import Synchronization
import LedeBasics
import Wikimedia
import Upstream

/// The live bell's fan-in: one Echo poll per user on this replica, however many of that user's event streams are
/// open — one per interface language the user's streams read in (Echo writes its notifications' words in the poll's
/// `uselang`; a user's streams are bounded across languages, so are the polls). Users are keyed by a keyed hash of their
/// token, edition and interface language (the process's random SipHash key), so the token
/// itself is held only by the poll that needs it, and never logged. The first poll round checks the token: a stream
/// that opens while a round is in flight joins it. Polling stops with the user's last stream; a `Retry-After` from
/// Wikimedia (or the circuit breaker) pauses it while streams stay open.
final class NotificationHub: Sendable {
    struct Settings: Sendable {
        /// Seconds between poll rounds of one user (spread ±10 %). Default 30.
        var interval: Double = 30
        /// Open streams one user may have on this replica. Default 8.
        var maxStreamsPerUser = 8
        /// Unread notifications read per round (Echo's page).
        var pageSize = 50
        /// First polls (one per user opening a bell) run at once: the upstream's concurrency bound.
        var firstPolls = 16
        /// Seconds a user's first poll may wait for its turn before the stream is refused with a spread 503. Default 10.
        var firstPollWait: Double = 10
        /// The range a refused stream's `Retry-After` is drawn from, per stream (seconds).
        var busyRetry: ClosedRange<Int> = 2...12
        init() {}
    }

    /// A first poll that could not start within `firstPollWait`.
    struct Busy: Error {}

    /// The problem a stream refused in a storm gets: 503 with its own `Retry-After`, drawn from `busyRetry`.
    func busy() -> Problem {
        let wait = Int.random(in: settings.busyRetry)
        return Problem(status: 503, slug: "streams-busy", .problemStreamsBusy, String(wait), headers: ["Retry-After": "\(wait)"])
    }

    /// What one poll round saw: the unread count and the unread notifications, newest first.
    struct Snapshot: Sendable, Equatable {
        var unread: Int
        var items: [NotificationItem]
        /// The newest notification seen: the event id, derived from Wikimedia's data, so any replica can resume from it.
        var newestID: Int
    }

    /// What a stream is told.
    enum Update: Sendable {
        /// Notifications new since the previous round (oldest first) and the count after them.
        case changed(new: [NotificationItem], unread: Int, newestID: Int)
        /// The count changed without a new notification (read elsewhere, or through this replica's mark-read).
        case badge(unread: Int, newestID: Int)
        /// Wikimedia refused the token: the stream ends with this problem.
        case refused(Problem)
    }

    let api: any WikimediaAPI
    let settings: Settings
    private let users = Mutex(Polls())
    private let nextID = Atomic<Int>(0)
    /// Where new users' first polls wait their turn.
    let admission: FirstPollAdmission
    /// When each polled user's next round is due.
    private let clock: PollClock<UserPoll>

    init(api: any WikimediaAPI, settings: Settings = Settings()) {
        self.api = api
        self.settings = settings
        admission = FirstPollAdmission(capacity: settings.firstPolls, maxWait: settings.firstPollWait)
        // The clock holds its polls weakly, and the hub through its `fire` weakly too: a hub let go stops its clock.
        let hub = WeakHub()
        clock = PollClock { poll in hub.value?.due(poll) }
        hub.value = self
    }

    /// The polls by key, and each account's polls (one per interface language its streams read in).
    struct Polls {
        var byKey: [Int: UserPoll] = [:]
        /// `key(token:lang:)` → the keys of that account's polls.
        var accounts: [Int: [Int]] = [:]

        /// The streams open for `token` on `lang`, in every interface language.
        func streams(ofAccount account: Int, token: String) -> Int {
            accounts[account, default: []].reduce(0) { n, key in
                guard let poll = byKey[key], poll.token == token else { return n }
                return n + poll.state.withLock { $0.subscribers.count }
            }
        }
    }

    /// Polls running now: users, times the interface languages they read in (metrics, tests).
    var polledUsers: Int { users.withLock { $0.byKey.count } }

    static func key(token: String, lang: LanguageCode, uselang: String? = nil) -> Int {
        var h = Hasher()   // seeded at random per process: a keyed hash
        h.combine(token)
        h.combine(lang.code)
        if let uselang { h.combine(uselang) }
        return h.finalize()
    }

    /// The slot of `token`'s poll in `uselang`: its hash, or the next free or matching one should another poll share
    /// that hash — one user's streams never see another's notifications.
    static func slot(in users: [Int: UserPoll], _ hashed: Int, token: String, uselang: String?) -> Int {
        var key = hashed
        while let existing = users[key], existing.token != token || existing.uselang != uselang { key &+= 1 }
        return key
    }

    /// One user's poll and streams.
    final class UserPoll: Sendable {
        struct State {
            var subscribers: [Int: any NotificationSink] = [:]
            /// Streams waiting for the user's first round (each told its outcome once, then dropped).
            var waiters: [@Sendable (Result<Snapshot, any Error>) -> Void] = []
            var latest: Snapshot?
            var round: Task<Snapshot, Error>?
            /// The next round is on the hub's clock (one clock for all users, not a task each).
            var scheduled = false
            var pausedUntil: Double = 0
            var ended = false
        }
        /// The user's token, held while the user has streams (for the polls), never logged.
        let token: String
        let lang: LanguageCode
        /// The interface language Echo is asked to write in (nil: the wiki's).
        let uselang: String?
        /// The account's key (`key(token:lang:)`), under which the account's polls are listed.
        let account: Int
        /// The poll's own key in `Polls.byKey`.
        let key: Int
        let state: Mutex<State>
        init(token: String, lang: LanguageCode, uselang: String?, account: Int, key: Int) {
            self.token = token
            self.lang = lang
            self.uselang = uselang
            self.account = account
            self.key = key
            state = Mutex(State())
        }
    }

    /// What a subscription starts from: the stream's id, the snapshot, and the key of its poll.
    typealias Subscribed = (id: Int, snapshot: Snapshot, key: Int)

    /// Subscribes `inbox` to `token`'s updates in `uselang`; `done` is told, once, the snapshot they start from. A
    /// user already polled starts from the last round (its token checked then) at once; the first stream of a user
    /// waits for the first round, which checks the token — as a waiter of that round, not a task of its own, so a
    /// storm of opening streams costs a closure each. A refused token (`UpstreamError.notAuthorised`), a full quota of
    /// streams (429), a storm's refusal (503) and an upstream failure are told as failures.
    func subscribe(token: String, lang: LanguageCode, uselang: String? = nil, sink inbox: any NotificationSink,
                   then done: @escaping @Sendable (Result<Subscribed, any Error>) -> Void) {
        let hashed = Self.key(token: token, lang: lang, uselang: uselang)
        let account = Self.key(token: token, lang: lang)
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        let limit = settings.maxStreamsPerUser
        // The snapshot a stream starts from and the updates it is told are taken under one lock: every update after
        // it is relative to it (no notification twice, none lost).
        let joined: (poll: UserPoll, known: Snapshot?, key: Int)
        do {
            joined = try users.withLock { users in
                // The account's streams in every language count against one quota.
                guard users.streams(ofAccount: account, token: token) < limit else {
                    throw Problem(status: 429, slug: "too-many-streams", .problemAccountStreamsFull, String(limit), headers: ["Retry-After": "30"])
                }
                let key = Self.slot(in: users.byKey, hashed, token: token, uselang: uselang)
                let poll: UserPoll
                if let existing = users.byKey[key] { poll = existing } else {
                    poll = UserPoll(token: token, lang: lang, uselang: uselang, account: account, key: key)
                    users.byKey[key] = poll
                    users.accounts[account, default: []].append(key)
                }
                return poll.state.withLock { s -> (UserPoll, Snapshot?, Int) in
                    s.subscribers[id] = inbox
                    if let latest = s.latest { return (poll, latest, key) }
                    s.waiters.append { [self] result in
                        switch result {
                        case .success(let snapshot):
                            startPolling(poll, key: key)
                            done(.success((id, snapshot, key)))
                        case .failure(let error):
                            unsubscribe(key: key, id: id)
                            done(.failure(error is Busy ? busy() : error))   // each refused stream its own Retry-After
                        }
                    }
                    if s.round == nil { s.round = startRound(poll, key: key, token: token, first: true) }
                    return (poll, nil, key)
                }
            }
        } catch {
            done(.failure(error))
            return
        }
        if let known = joined.known {
            startPolling(joined.poll, key: joined.key)
            done(.success((id, known, joined.key)))
        }
    }

    /// The stream `id` closed; the user's last stream stops the polling and forgets the token.
    func unsubscribe(key: Int, id: Int) {
        let inbox: (any NotificationSink)? = users.withLock { users in
            guard let poll = users.byKey[key] else { return nil }
            return poll.state.withLock { s in
                let inbox = s.subscribers.removeValue(forKey: id)
                guard s.subscribers.isEmpty, s.round == nil else { return inbox }
                users.byKey[key] = nil
                users.accounts[poll.account]?.removeAll { $0 == key }
                if users.accounts[poll.account]?.isEmpty == true { users.accounts[poll.account] = nil }
                s.ended = true   // its clock entry, weak, is dropped when it comes due
                return inbox
            }
        }
        inbox?.end()
    }

    /// A mark-read through this replica: that user's streams, in every language, get the new count at once.
    func countChanged(token: String, lang: LanguageCode, unread: Int) {
        let account = Self.key(token: token, lang: lang)
        let polls = users.withLock { users in users.accounts[account, default: []].compactMap { users.byKey[$0] }.filter { $0.token == token } }
        for poll in polls {
            let (inboxes, newest): ([any NotificationSink], Int) = poll.state.withLock { s in
                guard var latest = s.latest, latest.unread != unread else { return ([], 0) }
                latest.unread = unread
                s.latest = latest
                return (Array(s.subscribers.values), latest.newestID)
            }
            for inbox in inboxes { inbox.deliver(.badge(unread: unread, newestID: newest)) }
        }
    }

    // MARK: - Polling

    /// One poll round, shared by whoever asks while it runs; its result is compared with the last and told. A user's
    /// first round waits for its turn among the other new users' first rounds.
    private func startRound(_ poll: UserPoll, key: Int, token: String, first: Bool = false,
                            then ended: (@Sendable () -> Void)? = nil) -> Task<Snapshot, Error> {
        let api = self.api, pageSize = settings.pageSize, admission = self.admission
        return Task { [self] in
            if first {
                guard await admission.enter() else { failed(poll, key: key, Busy()); throw Busy() }
            }
            defer {
                if first { admission.leave() }
                ended?()
            }
            do {
                let page = try await api.notifications(lang: poll.lang, authorization: token, filter: .unread, limit: pageSize, continueFrom: nil,
                                                       uselang: poll.uselang)
                let items = page.list.map(NotificationItem.init).filter { !$0.read }.sorted { $0.id > $1.id }
                let snapshot = Snapshot(unread: page.rawcount, items: items, newestID: items.first?.id ?? 0)
                publish(poll, snapshot)
                return snapshot
            } catch {
                failed(poll, key: key, error)
                throw error
            }
        }
    }

    private func publish(_ poll: UserPoll, _ snapshot: Snapshot) {
        let (inboxes, update, waiters): ([any NotificationSink], Update?, [@Sendable (Result<Snapshot, any Error>) -> Void]) = poll.state.withLock { s in
            s.round = nil
            let waiters = s.waiters
            s.waiters = []
            let previous = s.latest
            var next = snapshot
            next.newestID = max(snapshot.newestID, previous?.newestID ?? 0)
            s.latest = next
            guard let previous else { return ([], nil, waiters) }
            let new = snapshot.items.filter { $0.id > previous.newestID }.sorted { $0.id < $1.id }
            if !new.isEmpty { return (Array(s.subscribers.values), .changed(new: new, unread: next.unread, newestID: next.newestID), waiters) }
            if next.unread != previous.unread { return (Array(s.subscribers.values), .badge(unread: next.unread, newestID: next.newestID), waiters) }
            return ([], nil, waiters)
        }
        if let update { for inbox in inboxes { inbox.deliver(update) } }
        for waiter in waiters { waiter(.success(snapshot)) }
    }

    /// A refused token ends every stream of that user; `Retry-After` pauses the polling; anything else is tried again
    /// next round.
    private func failed(_ poll: UserPoll, key: Int, _ error: Error) {
        let u = error as? UpstreamError
        let refused = u == .notAuthorised
        let (inboxes, waiters): ([any NotificationSink], [@Sendable (Result<Snapshot, any Error>) -> Void]) = poll.state.withLock { s in
            s.round = nil
            let waiters = s.waiters
            s.waiters = []
            if let wait = u?.retryAfter { s.pausedUntil = Date().timeIntervalSinceReferenceDate + Double(wait) }
            return (refused ? Array(s.subscribers.values) : [], waiters)
        }
        // Streams still waiting for their first round are answered with the failure (a 401, a 503…) instead.
        for waiter in waiters { waiter(.failure(error)) }
        if refused {
            let problem = Problem(upstream: .notAuthorised)
            for inbox in inboxes { inbox.deliver(.refused(problem)); inbox.end() }
        }
    }

    private func startPolling(_ poll: UserPoll, key: Int) {
        let start: Bool = poll.state.withLock { s in
            guard !s.scheduled, !s.ended else { return false }
            s.scheduled = true
            return true
        }
        if start { clock.schedule(poll, after: nextWait(poll)) }
    }

    /// Seconds to the user's next round: the interval, spread ±10 %, or longer while a `Retry-After` lasts.
    private func nextWait(_ poll: UserPoll) -> Double {
        let pausedFor = poll.state.withLock { $0.pausedUntil } - Date().timeIntervalSinceReferenceDate
        return max(settings.interval * Double.random(in: 0.9...1.1), pausedFor, 0.01)
    }

    /// The clock says `poll`'s next round is due: it runs (or, while a `Retry-After` lasts, waits on), and the round
    /// that ends puts the next on the clock. A user whose streams all closed is not polled again.
    private func due(_ poll: UserPoll) {
        enum Next { case stop, wait(Double), round }
        let now = Date().timeIntervalSinceReferenceDate
        let next: Next = poll.state.withLock { s in
            guard !s.ended, !s.subscribers.isEmpty else { s.scheduled = false; return .stop }
            if s.pausedUntil > now { return .wait(s.pausedUntil - now) }
            // A round already running (a stream's first) counts as this one.
            if s.round != nil { return .wait(settings.interval * Double.random(in: 0.9...1.1)) }
            s.round = startRound(poll, key: poll.key, token: poll.token, then: { [self] in
                let again = poll.state.withLock { s in
                    guard !s.ended, !s.subscribers.isEmpty else { s.scheduled = false; return false }
                    return true
                }
                if again { clock.schedule(poll, after: nextWait(poll)) }
            })
            return .round
        }
        if case .wait(let seconds) = next { clock.schedule(poll, after: seconds) }
    }
}

/// The hub as its clock's `fire` sees it: weakly (the clock outlives no hub).
private final class WeakHub: @unchecked Sendable {   // written once, in the hub's init, before the clock can fire
    weak var value: NotificationHub?
}

/// Where the hub tells one stream its updates (a stream's end of a user's poll): called from any thread, in the order
/// of the poll's rounds; `end()` once the hub lets go of it (the last stream closed, or the token was refused).
protocol NotificationSink: AnyObject, Sendable {
    func deliver(_ update: NotificationHub.Update)
    func end()
}
