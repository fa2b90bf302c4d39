// FileSignature: what a file is by its first bytes.
import FileOutput
import XCTest

final class FileSignatureTests: XCTestCase {
    func testRecognizesEachKindAndNothingElse() {
        func kind(_ bytes: [UInt8], size: Int? = nil) -> FileSignature? {
            FileSignature.recognize(prefix: Array(bytes.prefix(FileSignature.prefixLength)), size: size ?? bytes.count)
        }
        XCTAssertEqual(kind(Array("drummer-checkpoint-seal 1\nsha256 00".utf8)), .drummerCheckpoint)
        XCTAssertEqual(kind([0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]), .hdf5)
        // safetensors: a header length the file holds, then the header's "{".
        let header = Array(#"{"a":{}}"#.utf8)
        XCTAssertEqual(kind([UInt8(header.count), 0, 0, 0, 0, 0, 0, 0] + header + [0, 0, 0, 0]), .safetensors)
        XCTAssertNil(kind([200, 0, 0, 0, 0, 0, 0, 0] + header), "a header longer than the file")
        // ONNX: ir_version 8, then producer_name.
        XCTAssertEqual(kind([0x08, 0x08, 0x12, 0x07] + Array("drummer".utf8)), .onnx)
        XCTAssertNil(kind([0x08, 0x08, 0x00, 0x07]))
        XCTAssertNil(kind(Array("not a model file at all\n".utf8)))
        XCTAssertNil(kind([]))
    }
}
