import EventLoops
import Glibc
import XCTest

/// The loops' I/O wrappers, which make their system calls through syscall(2) rather than glibc's wrappers: what
/// each result means, on a non-blocking stream socket pair.
final class SyscallTests: XCTestCase {
    private func pair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        let rc = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
        XCTAssertEqual(rc, 0, String(cString: strerror(errno)))
        return (fds[0], fds[1])
    }

    private func read(_ fd: Int32, _ count: Int = 64) -> (Syscall.IOResult, [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: count)
        let r = buffer.withUnsafeMutableBytes { Syscall.read(fd, $0.baseAddress!, $0.count) }
        if case .bytes(let n) = r { return (r, Array(buffer[0..<n])) }
        return (r, [])
    }

    func testSentBytesAreReadInOrderAndTwoBuffersGoOutAsOne() throws {
        let (a, b) = try pair()
        defer { close(a); close(b) }
        let head = Array("HTTP/1.1 200 OK\r\n\r\n".utf8), body = Array("hello".utf8)
        let one = head.withUnsafeBytes { h in body.withUnsafeBytes { Syscall.send2(a, h.baseAddress!, h.count, $0.baseAddress!, $0.count) } }
        guard case .bytes(let n) = one else { return XCTFail("send2: \(one)") }
        XCTAssertEqual(n, head.count + body.count)
        let two = body.withUnsafeBytes { Syscall.send(a, $0.baseAddress!, $0.count) }
        guard case .bytes(5) = two else { return XCTFail("send: \(two)") }
        XCTAssertEqual(read(b).1, head + body + body)
    }

    func testNothingToReadIsWouldBlockAndAClosedPeerIsEndOfFile() throws {
        let (a, b) = try pair()
        defer { close(b) }
        guard case .wouldBlock = read(b).0 else { return XCTFail("an empty non-blocking socket must say wouldBlock") }
        close(a)
        guard case .endOfFile = read(b).0 else { return XCTFail("a closed peer must read as end of file") }
    }

    /// MSG_NOSIGNAL reaches the kernel through the raw calls: a send to a closed peer fails with EPIPE and raises no
    /// SIGPIPE. The signal is blocked on this thread only for the test (nothing else in the process is touched), so a
    /// SIGPIPE the sends raised would be left pending here.
    func testASendToAClosedPeerFailsWithEPIPEAndRaisesNoSignal() throws {
        var pipe = sigset_t(), previous = sigset_t()
        sigemptyset(&pipe); sigaddset(&pipe, SIGPIPE)
        XCTAssertEqual(pthread_sigmask(SIG_BLOCK, &pipe, &previous), 0)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let (a, b) = try pair()
        defer { close(a) }
        close(b)
        let bytes = Array("x".utf8)
        let r = bytes.withUnsafeBytes { Syscall.send(a, $0.baseAddress!, $0.count) }
        let r2 = bytes.withUnsafeBytes { p in bytes.withUnsafeBytes { Syscall.send2(a, p.baseAddress!, p.count, $0.baseAddress!, $0.count) } }
        var pending = sigset_t()
        sigpending(&pending)
        let raised = sigismember(&pending, SIGPIPE) == 1
        if raised { var zero = timespec(); _ = sigtimedwait(&pipe, nil, &zero) }   // taken before the mask is restored
        XCTAssertFalse(raised, "a send raised SIGPIPE: MSG_NOSIGNAL did not reach the kernel")
        guard case .failed(let e) = r else { return XCTFail("send: \(r)") }
        XCTAssertEqual(e, EPIPE)
        guard case .failed(EPIPE) = r2 else { return XCTFail("send2: \(r2)") }
    }

    func testAFullSocketIsWouldBlock() throws {
        let (a, b) = try pair()
        defer { close(a); close(b) }
        let chunk = [UInt8](repeating: 7, count: 64 * 1024)
        var blocked = false
        for _ in 0..<1024 {   // bounded: a socket pair's buffer is far below 64 MB
            let r = chunk.withUnsafeBytes { Syscall.send(a, $0.baseAddress!, $0.count) }
            if case .wouldBlock = r { blocked = true; break }
            guard case .bytes = r else { return XCTFail("send: \(r)") }
        }
        XCTAssertTrue(blocked)
    }
}
