package urdf

//go:generate go run ./gen
