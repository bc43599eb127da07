// Package firmware is the server's firmware repository: one generic node
// image described by manifest.json, its
// archive, and the role configurations (configs/*.yaml) nodes download when
// they are adopted.
//
// Nodes reach it two ways: the bus services /saint/firmware/check and
// /saint/firmware/download (the image in chunks, so a download resumes at
// an offset), and plain HTTP on the internal network for tools and
// provisioning scripts. An image that does not match its manifest is not
// offered at all.
//
// New images arrive through Publish (make firmware, saintctl firmware
// publish, writing a tree on disk) or through UploadHandler (POST
// /api/firmware, saintctl firmware upload), which checks the uploader's
// sha256 and that the image is a static ELF executable for the nodes'
// architecture before it replaces current/ and moves the previous image to
// archive/v<version>/.
package firmware
