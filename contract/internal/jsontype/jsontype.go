// Package jsontype holds the JSON Schema types as bits, so that the
// classifier (package contract) and the witness generator (contract/witness)
// read a schema's "type" the same way.
package jsontype

// The type bits. Number includes Integer: a schema of type "number" admits
// integers.
const (
	Null = 1 << iota
	Boolean
	Object
	Array
	Number
	Integer
	String
	All = Null | Boolean | Object | Array | Number | Integer | String
)

// Bits maps a "type" keyword value to its bits ("number" is Number|Integer);
// an unknown name maps to 0.
var Bits = map[string]int{"null": Null, "boolean": Boolean, "object": Object, "array": Array, "number": Number | Integer, "integer": Integer, "string": String}
