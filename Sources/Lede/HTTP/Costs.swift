/// What a request costs its client's budget (`--client-rate`, `--client-burst`): answered from memory 1; work off the
/// loop (an upstream call, a fragment's refresh) `Router.workCost` (4); a write 10, since each reaches Wikimedia and
/// can never be repeated; an edit 20 (a token and a save); a share card 10 (an image fetched, decoded and typeset).
/// The screens name their routes' costs from here; docs/CONFIGURATION.md explains them.
enum Costs {
    static let write = 10
    static let edit = 20
    static let render = 10
    static let sync = 20
}
