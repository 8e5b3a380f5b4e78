import EventLoops
import HTTPCore

/// The stages between a request read (`RequestIntake`) and its answer: the method check, the router, the client's
/// budget (the rate-limit stage, keyed by the credentials or the address the intake read), then the handler — on the
/// loop (`.response`), in a task that prefers the loop (`.async`) or through a responder (`.callback`). What the handler
/// throws becomes its problem (`Problem.answering`); the answer goes out through `respond` (the problem stage, the
/// encoder, the metrics and the access log).
extension Connection {
    func route(_ request: HTTPRequest) {

        if request.method != "GET" && !Router.knownMethods.contains(request.method) {
            // A well-formed method Lede implements nowhere (RFC 9110 §9.1): 501, not 405; charged like any request.
            if refusedByBudget() { return }
            let method = String(request.method.prefix(40))
            respond(Problem(status: 501, slug: "method-not-implemented", .methodNotImplemented, method).response)
            return
        }
        var match = core.router.match(request)
        if case .found(let route, _) = match, route.adminOnly && hidesAdminRoutes { match = .notFound }
        switch match {
        case .found(let route, let params):
            current.route = route.index
            // Each client's budget: admitted while its bucket holds a unit; work off the loop pays its route's cost.
            var budget: ClientBudgets.Budget?
            if route.limited, let budgets {
                let b = budgets._withUnsafeGuaranteedRef { $0.budget(current.credentials, address: current.client, now: loop.now) }
                if refused(b) { return }
                if b.token != 0 && b.state != .accepted {
                    // A token not (yet) accepted: its answer may teach the budgets, or else it is checked once.
                    current.unprovenToken = b.token
                    if !route.vouches { budgets._withUnsafeGuaranteedRef { $0.check(b, credentials: current.credentials, now: loop.now) } }
                }
                budget = b
            }
            let context = RequestContext(request: request, parameters: params, id: current.requestID, route: route.pattern, trace: current.trace,
                                         client: current.client, viaTrustedProxy: current.viaProxy, credentials: current.credentials,
                                         language: current.language ?? .unnamed)
            let result: HandlerResult
            do { result = try route.handler(context) } catch { result = .response(Problem.answering(error).response) }
            switch result {
            case .response(let response):
                respond(response)
            case .async(let work):
                if let budget { chargeWork(budget, route.cost) }
                inFlight = true
                let loop = server.loop
                // The task prefers this loop: it starts here, its awaits resume here, and it answers in place.
                let connection = LoopBound(self, on: loop)
                let trace = current.trace
                Task(executorPreference: loop) {
                    let response = await TraceContext.$task.withValue(trace) {
                        do { return try await work() } catch { return Problem.answering(error).response }
                    }
                    if loop.inLoop { connection.value.asyncCompleted(response) } else { loop.execute { connection.value.asyncCompleted(response) } }
                }
            case .callback(let start):
                if let budget { chargeWork(budget, route.cost) }
                // No task: the work answers through the responder, on this loop as a rule (an upstream call made
                // here calls back here). An answer given before `start` returns is written as an inline one.
                inFlight = true
                let responder = Responder(LoopBound(self, on: server.loop))
                startingCallback = true
                start(responder)
                startingCallback = false
                if let answer = inlineAnswer {
                    inlineAnswer = nil
                    inFlight = false
                    respond(answer)
                }
            }
        case .methodNotAllowed(let allow):
            if refusedByBudget() { return }
            let method = String(request.method.prefix(40)), path = String(request.path.prefix(200)), methods = allow.joined(separator: ", ")
            var p = Problem(status: 405, .methodNotAllowed, method, path, methods)
            p.headers.set("Allow", methods)
            respond(p.response)
        case .notFound:
            // A path no route takes costs a unit too: a flood of 404s is a flood (only the probes are free).
            if refusedByBudget() { return }
            let path = String(request.path.prefix(200))
            respond(Problem(status: 404, .noRoute, path).response)
        }
    }

    /// The rate-limit stage for a request no route takes (404, 405, 501): its client's unit, or the 429 answered.
    func refusedByBudget() -> Bool {
        guard let budgets else { return false }
        return refused(budgets._withUnsafeGuaranteedRef { $0.budget(current.credentials, address: current.client, now: loop.now) })
    }

    /// What the answer to a request with a token not yet accepted says of that token.
    func learn(_ budgets: Unmanaged<ClientBudgets>, status: Int, now: UInt64) {
        let vouches = current.route >= 0 && core.router.routes[current.route].vouches
        budgets._withUnsafeGuaranteedRef { $0.learn(token: current.unprovenToken, status: status, vouches: vouches, now: now) }
    }

    /// Admits the request on its budget if its bucket holds a unit; else answers the 429 and says so.
    @inline(__always)
    func refused(_ budget: ClientBudgets.Budget) -> Bool {
        let refusal: HTTPResponse? = budget.limiter._withUnsafeGuaranteedRef { limiter in
            let decision = limiter.admit(budget.key, now: loop.now)
            return decision.admitted ? nil : limiter.refusal(decision)
        }
        if let refusal { respond(refusal); return true }
        return false
    }

    /// Work that goes off the loop costs its client its route's price (the unit of its admission already paid).
    func chargeWork(_ budget: ClientBudgets.Budget, _ cost: Int) {
        guard cost > 1 else { return }
        budget.limiter._withUnsafeGuaranteedRef { $0.charge(budget.key, cost - 1, now: loop.now) }
    }
}
