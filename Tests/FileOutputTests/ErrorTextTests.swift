// ErrorText.jsonSyntax: why a file is not JSON, with its place (line and column, or its end).
@testable import FileOutput
import Foundation
import XCTest

final class ErrorTextTests: XCTestCase {
    func testAJSONSyntaxErrorSaysWhere() {
        XCTAssertNil(ErrorText.jsonSyntax(Data("{\"a\": [1, 2]}".utf8)))
        XCTAssertNil(ErrorText.jsonSyntax(Data("3".utf8)), "any top-level value is JSON")
        XCTAssertEqual(ErrorText.jsonSyntax(Data("{\"21\": 44,\n \"22\" 42}".utf8)),
                       "invalid value around character 17 (line 2, column 7)")
        XCTAssertEqual(ErrorText.jsonSyntax(Data("x".utf8)), "invalid value around character 0 (line 1, column 1)")
        XCTAssertEqual(ErrorText.jsonSyntax(Data("{\n\"a\": 1,\n".utf8)),
                       "unexpected end of file during JSON parse (its end: byte 10, line 3)")
        XCTAssertEqual(ErrorText.jsonSyntax(Data()), "unexpected end of file during JSON parse")
    }
}
