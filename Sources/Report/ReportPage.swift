// The page itself, through Plot: head with inline CSS, a header naming the inputs, a
// table of contents of fragment links, the warnings, then the sections. Nothing is
// fetched: no script, font, stylesheet or image is referred to by URL; audio and SVG are
// inline. (Plot escapes text but not attribute values, so attributes only ever hold
// values built here: ids, classes, colours, data: URIs.)
import DrummerCore
import Foundation
import Plot

enum ReportPage {
    static let css = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;margin:0 auto;max-width:1320px;padding:0 20px 40px}
        h1{font-size:24px;margin:18px 0 4px}h2{font-size:19px;border-bottom:1px solid #ddd;padding-bottom:3px;margin-top:30px}
        h3{font-size:15px;margin:16px 0 6px}h3.sub{font-size:13px;color:#555}
        nav a{margin-right:14px}header p{margin:2px 0;color:#555}
        .figures{display:flex;flex-wrap:wrap;gap:18px}
        figure{margin:0;border:1px solid #e5e5e5;border-radius:4px;padding:8px;background:#fff}
        figcaption{font-size:12px;color:#444;max-width:580px;margin-top:4px}
        .legend{display:block;margin-top:3px}.key{display:inline-flex;align-items:baseline;max-width:100%;margin-right:12px;overflow-wrap:anywhere;vertical-align:top}
        .swatch{display:inline-block;flex:none;width:10px;height:10px;margin-right:4px;border-radius:2px;vertical-align:-1px}
        .note{color:#6b5200;background:#fff8e1;border-left:3px solid #f0c040;padding:4px 8px;margin:6px 0}
        .warnings li{color:#8a1f11}.small{font-size:12px;color:#555}
        table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #e3e3e3;padding:3px 8px;text-align:left;font-size:13px;vertical-align:top}
        th{background:#f7f7f7;font-weight:600}table.kv td{font-family:ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere;max-width:760px}
        .vocab{display:flex;flex-wrap:wrap;gap:2px 14px;font-size:12px;margin:6px 0}.vocab span{white-space:nowrap}.vocab b{color:#777;font-weight:400}
        .clip{margin:8px 0}.clip p{margin:2px 0;font-size:13px}audio{width:420px;max-width:100%}
        svg text{font-family:system-ui,sans-serif}
        figure{max-width:100%;box-sizing:border-box}svg{max-width:100%;height:auto}
        table{display:block;max-width:100%;overflow-x:auto}pre{max-width:100%;overflow-x:auto}
        nav{overflow-wrap:anywhere}header p,figcaption,li,h3{overflow-wrap:anywhere}th .name{display:inline-block;width:max-content;max-width:24em;overflow-wrap:anywhere}
        @media (max-width:600px){body{padding:0 8px 30px}nav a{display:inline-block;margin:2px 10px 2px 0}}
        footer{margin-top:30px;font-size:12px;color:#777}
        """

    static func render(title: String, options: ReportOptions, sections: [Section], warnings: [String]) -> String {
        var inputs: [String] = []
        if let c = options.checkpoints { inputs.append("checkpoints: \(c)") }
        if let m = options.model { inputs.append("model: \(m)") }
        if !options.generated.isEmpty { inputs.append("generated: \(options.generated.joined(separator: ", "))") }
        if let r = options.reference { inputs.append("reference: \(r)") }
        let toc: [Node<HTML.BodyContext>] = sections.map { .a(.href("#\($0.id)"), .text($0.title)) }
        let html = HTML(
            .lang(.english),
            .head(
                .encoding(.utf8),
                .element(named: "title", text: title),
                .meta(.name("viewport"), .content("width=device-width, initial-scale=1")),
                .style(css)
            ),
            .body(
                .header(
                    .h1(.text(title)),
                    .group(inputs.map { .p(.text($0)) }),
                    .nav(.group(warnings.isEmpty ? toc : [.a(.href("#warnings"), .text("Warnings"))] + toc))
                ),
                .if(!warnings.isEmpty, .section(
                    .id("warnings"), .class("warnings"),
                    .h2(.text("Warnings")),
                    .ul(.group(warnings.map { .li(.text($0)) }))
                )),
                .group(sections.map { s in
                    .section(.id(s.id), .h2(.text(s.title)), .group(s.nodes))
                }),
                .footer(.text("drummer \(DrummerVersion.string)"))
            )
        )
        return html.render()
    }
}
