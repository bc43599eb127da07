package ssd1306_test

import (
	"fmt"
	"image"
	"log"

	"github.com/saint-os/saint/hal/device/ssd1306"
	"github.com/saint-os/saint/sim/twin"
	twinoled "github.com/saint-os/saint/sim/twin/ssd1306"
)

// Draw a status line and a box, flush, and read the panel back from the
// twin, as the simulator's UI does.
func Example() {
	oled := twinoled.New()
	bus := &twin.I2CBus{Name: "i2c-1"}
	bus.Attach(0x3C, oled)
	d, err := ssd1306.New(bus, nil)
	if err != nil {
		log.Fatal(err)
	}
	f := d.Frame()
	f.Text(2, 2, "OK")
	f.Rect(image.Rect(0, 0, 16, 11), true)
	if err := d.Flush(); err != nil {
		log.Fatal(err)
	}
	img := oled.Image()
	for y := 0; y < 11; y++ {
		for x := 0; x < 16; x++ {
			if img.GrayAt(x, y).Y != 0 {
				fmt.Print("#")
			} else {
				fmt.Print(".")
			}
		}
		fmt.Println()
	}
	// Output:
	// ################
	// #..............#
	// #..###..#...#..#
	// #.#...#.#..#...#
	// #.#...#.#.#....#
	// #.#...#.##.....#
	// #.#...#.#.#....#
	// #.#...#.#..#...#
	// #..###..#...#..#
	// #..............#
	// ################
}
