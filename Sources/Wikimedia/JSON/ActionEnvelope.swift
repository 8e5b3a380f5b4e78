import LedeBasics

// The Action API's envelope: `query` or `error`.

/// Action API envelopes (internal to decoding).
struct ActionEnvelope<Query: Decodable>: Decodable {
    var query: Query?
    var error: ActionError?
}

struct ActionError: Decodable, Sendable {
    var code: String
    var info: String?
}
