package tokenizer_test

import (
	"fmt"

	"github.com/aiperf/toolkit/lib/tokenizer"
)

func Example() {
	tk, err := tokenizer.Builtin()
	if err != nil {
		panic(err)
	}
	ids := tk.Encode("Hello world<|endoftext|> it's")
	fmt.Println(ids)
	fmt.Printf("%q\n", tk.Decode(ids))
	sep, _ := tk.BlockSeparator()
	fmt.Println(sep, tk.IsSpecial(sep))
	// Output:
	// [9707 1879 151643 432 594]
	// "Hello world<|endoftext|> it's"
	// 151645 true
}

func ExampleTokenizer_EncodeWithBoundaries() {
	tk, err := tokenizer.Builtin()
	if err != nil {
		panic(err)
	}
	ids, starts := tk.EncodeWithBoundaries("unbelievable tokenization")
	for i, id := range ids {
		fmt.Printf("%q %v\n", tk.TokenBytes(id), starts[i])
	}
	// Output:
	// "un" true
	// "belie" false
	// "vable" false
	// " token" true
	// "ization" false
}
