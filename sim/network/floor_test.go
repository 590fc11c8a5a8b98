package network

// Every test of the package checks, at each read, the copies of the
// controllers' sleep floors that peerFloor reads (verifyFloor).
func init() { verifyFloors = true }
