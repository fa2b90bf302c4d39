// The one byte-level fix-up HDF5Kit does on HDF5's output.
//
// H5Fget_file_image (libhdf5 1.10) clears the superblock's "file consistency
// flags" in the image it returns (the file is open for writing, so they are
// set in memory) but does not recompute the superblock checksum of a version
// 2/3 superblock: the image is then refused by every reader ("bad superblock
// checksum"). `repairChecksum` recomputes it, as HDF5 does on close, with
// HDF5's metadata checksum (Bob Jenkins' lookup3 `hashlittle`, initial value 0).
import FileOutput

enum Superblock {
    static let signature = FileSignature.hdf5Signature

    /// Recomputes the checksum of a version 2 or 3 superblock at the start of
    /// `image`; leaves anything else (version 0/1 superblocks have none) alone.
    static func repairChecksum(_ image: inout [UInt8]) {
        guard image.count >= 12, Array(image[0..<8]) == signature, image[8] >= 2 else { return }
        // signature 8, version 1, size of offsets 1, size of lengths 1, flags 1,
        // then base, extension, end-of-file and root addresses, then the checksum.
        let sizeOfOffsets = Int(image[9])
        let checksummed = 12 + 4 * sizeOfOffsets
        guard image.count >= checksummed + 4 else { return }
        let sum = image.withUnsafeBytes { lookup3(UnsafeRawBufferPointer(rebasing: $0[0..<checksummed])) }
        for i in 0..<4 { image[checksummed + i] = UInt8(truncatingIfNeeded: sum >> (8 * UInt32(i))) }
    }

    /// lookup3's `hashlittle` (public domain, Bob Jenkins 2006), byte by byte as
    /// in HDF5's H5_checksum_lookup3.
    static func lookup3(_ key: UnsafeRawBufferPointer, initval: UInt32 = 0) -> UInt32 {
        func rot(_ x: UInt32, _ k: UInt32) -> UInt32 { (x << k) | (x >> (32 - k)) }
        var a = 0xdead_beef &+ UInt32(truncatingIfNeeded: key.count) &+ initval
        var b = a, c = a
        func word(_ i: Int) -> UInt32 {
            // Bytes past the end count as zero (the tail of the last block).
            var w: UInt32 = 0
            for j in 0..<4 where i + j < key.count { w |= UInt32(key[i + j]) << (8 * UInt32(j)) }
            return w
        }
        var length = key.count, k = 0
        while length > 12 {
            a &+= word(k); b &+= word(k + 4); c &+= word(k + 8)
            a &-= c; a ^= rot(c, 4); c &+= b
            b &-= a; b ^= rot(a, 6); a &+= c
            c &-= b; c ^= rot(b, 8); b &+= a
            a &-= c; a ^= rot(c, 16); c &+= b
            b &-= a; b ^= rot(a, 19); a &+= c
            c &-= b; c ^= rot(b, 4); b &+= a
            length -= 12
            k += 12
        }
        if length == 0 { return c }
        a &+= word(k); b &+= word(k + 4); c &+= word(k + 8)
        c ^= b; c &-= rot(b, 14)
        a ^= c; a &-= rot(c, 11)
        b ^= a; b &-= rot(a, 25)
        c ^= b; c &-= rot(b, 16)
        a ^= c; a &-= rot(c, 4)
        b ^= a; b &-= rot(a, 14)
        c ^= b; c &-= rot(b, 24)
        return c
    }
}
