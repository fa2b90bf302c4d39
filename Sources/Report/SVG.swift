// The one place SVG markup is written: a small builder that escapes text and attribute
// values, formats numbers compactly (at most 2 decimals, no trailing zeros) and never
// emits a URL. Inline SVG in HTML needs no xmlns, so the page holds no network address.

/// An SVG image under construction.
public struct SVG: Sendable {
    public let width: Double
    public let height: Double
    private var body: [String] = []

    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// Appends one element with `attributes` (values escaped) and optional text content.
    public mutating func element(_ name: String, _ attributes: [(String, String)], text: String? = nil) {
        var s = "<" + name
        for (k, v) in attributes { s += " \(k)=\"\(SVG.escape(v))\"" }
        if let text { s += ">\(SVG.escape(text))</\(name)>" } else { s += "/>" }
        body.append(s)
    }

    /// Appends one element holding a `<title>` (a tooltip in browsers).
    public mutating func element(_ name: String, _ attributes: [(String, String)], title: String) {
        var s = "<" + name
        for (k, v) in attributes { s += " \(k)=\"\(SVG.escape(v))\"" }
        body.append(s + "><title>\(SVG.escape(title))</title></\(name)>")
    }

    public mutating func rect(x: Double, y: Double, width: Double, height: Double, _ extra: [(String, String)] = []) {
        element("rect", [("x", SVG.num(x)), ("y", SVG.num(y)), ("width", SVG.num(width)), ("height", SVG.num(height))] + extra)
    }

    public mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, _ extra: [(String, String)] = []) {
        element("line", [("x1", SVG.num(x1)), ("y1", SVG.num(y1)), ("x2", SVG.num(x2)), ("y2", SVG.num(y2))] + extra)
    }

    public mutating func text(_ content: String, x: Double, y: Double, _ extra: [(String, String)] = []) {
        element("text", [("x", SVG.num(x)), ("y", SVG.num(y))] + extra, text: content)
    }

    /// A polyline through `points` (nothing for an empty list).
    public mutating func polyline(_ points: [(x: Double, y: Double)], _ extra: [(String, String)] = []) {
        guard !points.isEmpty else { return }
        let coords = points.map { "\(SVG.num($0.x)),\(SVG.num($0.y))" }.joined(separator: " ")
        element("polyline", [("points", coords), ("fill", "none")] + extra)
    }

    /// Opens a group; close it with `endGroup()`.
    public mutating func beginGroup(_ attributes: [(String, String)] = []) {
        var s = "<g"
        for (k, v) in attributes { s += " \(k)=\"\(SVG.escape(v))\"" }
        body.append(s + ">")
    }

    public mutating func endGroup() { body.append("</g>") }

    /// The `<svg>` element: sized, with a viewBox, `role="img"` and an accessible label.
    public func render(label: String, className: String? = nil) -> String {
        var open = "<svg width=\"\(SVG.num(width))\" height=\"\(SVG.num(height))\" "
            + "viewBox=\"0 0 \(SVG.num(width)) \(SVG.num(height))\" role=\"img\" aria-label=\"\(SVG.escape(label))\""
        if let className { open += " class=\"\(SVG.escape(className))\"" }
        return open + "><title>\(SVG.escape(label))</title>" + body.joined() + "</svg>"
    }

    /// Escapes text and attribute values (&, <, >, ").
    public static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for ch in s {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(ch)
            }
        }
        return out
    }

    /// A coordinate: rounded to 2 decimals, without trailing zeros ("12", "12.5", "-0.25");
    /// non-finite values become 0 so the markup stays valid.
    public static func num(_ x: Double) -> String {
        guard x.isFinite else { return "0" }
        let r = (x * 100).rounded() / 100
        if abs(r) >= 1e15 { return String(format: "%.0f", r) }
        if r == r.rounded() { return r == 0 ? "0" : String(Int(r)) }
        var s = String(format: "%.2f", r)
        while s.hasSuffix("0") { s.removeLast() }
        return s
    }
}
