package ros2

//go:generate go run ./gen -idl idl -c cyclone
