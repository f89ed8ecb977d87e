package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"
)

// TestOpenAPIKinStrict: the served document loads and validates in
// kin-openapi (a second, stricter reader than libopenapi: it refuses
// keywords it does not know in places OpenAPI fixes, unknown formats and
// examples that break their schema), with no allowances.
func TestOpenAPIKinStrict(t *testing.T) {
	t.Parallel()
	d, err := apiDocument()
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(d.json)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("kin-openapi read version %q as before 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableMultiError()); err != nil {
		t.Fatal(err)
	}
}

// schemaKeywords are the JSON Schema 2020-12 and OpenAPI 3.1 keywords the
// description may use. YAML's flow mappings end a plain scalar at a comma,
// so "{description: a, b}" silently becomes a description "a" and a
// keyword "b" with a null value: the lint refuses both.
var schemaKeywords = map[string]bool{
	"$ref": true, "$defs": true, "$comment": true,
	"type": true, "enum": true, "const": true, "format": true, "pattern": true,
	"title": true, "description": true, "default": true, "examples": true, "example": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
	"minLength": true, "maxLength": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true, "uniqueItems": true, "items": true, "prefixItems": true,
	"contains": true, "minContains": true, "maxContains": true,
	"properties": true, "required": true, "additionalProperties": true, "patternProperties": true,
	"propertyNames": true, "minProperties": true, "maxProperties": true,
	"dependentRequired": true, "dependentSchemas": true,
	"unevaluatedProperties": true, "unevaluatedItems": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
	"contentMediaType": true, "contentEncoding": true, "discriminator": true,
}

// lintSchema returns the problems of one schema of openapi.yaml (at where):
// keywords with a null value, keywords JSON Schema does not know and empty
// schemas, which describe nothing.
func lintSchema(where string, v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); isBool {
			return nil
		}
		return []string{fmt.Sprintf("%s: %v is not a schema", where, v)}
	}
	if len(m) == 0 {
		return []string{where + ": an empty schema says nothing (give a type, or a description of what it may hold)"}
	}
	var out []string
	for k, sub := range m {
		at := where + "." + k
		switch {
		case sub == nil:
			out = append(out, at+": null value (an unquoted comma in a {...} mapping?)")
			continue
		case strings.HasPrefix(k, "x-"):
			continue
		case !schemaKeywords[k]:
			out = append(out, at+": not a JSON Schema keyword (an unquoted comma or colon in a {...} mapping?)")
			continue
		}
		switch k {
		case "properties", "patternProperties", "$defs", "dependentSchemas":
			props, ok := sub.(map[string]any)
			if !ok {
				out = append(out, at+": not a map of schemas")
				continue
			}
			for name, p := range props {
				out = append(out, lintSchema(at+"."+name, p)...)
			}
		case "items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
			"unevaluatedProperties", "unevaluatedItems":
			out = append(out, lintSchema(at, sub)...)
		case "allOf", "anyOf", "oneOf", "prefixItems":
			l, ok := sub.([]any)
			if !ok {
				out = append(out, at+": not a list of schemas")
				continue
			}
			for i, s := range l {
				out = append(out, lintSchema(fmt.Sprintf("%s[%d]", at, i), s)...)
			}
		}
	}
	return out
}

// TestOpenAPISchemaLint: every schema of openapi.yaml, named or inline in
// an operation, uses known keywords with values (lintSchema).
func TestOpenAPISchemaLint(t *testing.T) {
	t.Parallel()
	var src apiSource
	if err := yaml.Unmarshal(openAPISource, &src); err != nil {
		t.Fatal(err)
	}
	var problems []string
	for name, s := range src.Schemas {
		problems = append(problems, lintSchema("schemas."+name, s)...)
	}
	inline := func(where string, v any) {
		if m, ok := v.(map[string]any); ok {
			if isMediaTypes(m) {
				for mt, s := range m {
					if s, ok := s.(map[string]any); ok {
						problems = append(problems, lintSchema(where+"["+mt+"]", s)...)
					}
				}
				return
			}
			problems = append(problems, lintSchema(where, m)...)
		}
	}
	for key, op := range src.Operations {
		inline(key+" body", op.Body)
		for status, b := range op.OK {
			inline(fmt.Sprintf("%s %d", key, status), b)
		}
	}
	for name, p := range src.Parameters {
		if pm, ok := p.(map[string]any); ok {
			problems = append(problems, lintSchema("parameters."+name+".schema", pm["schema"])...)
		}
	}
	slices.Sort(problems)
	for _, p := range problems {
		t.Error("server/openapi.yaml: " + p)
	}
}

// TestOpenAPISchemaLintRefuses: the lint catches what a misplaced comma
// does (mutation check of the lint itself).
func TestOpenAPISchemaLintRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yaml, want string }{
		{`{type: object, properties: {order: {type: integer, description: position, from 0}}}`, "from 0: null value"},
		{`{type: object, properties: {a: {type: string, description: x, see: y}}}`, "see: not a JSON Schema keyword"},
		{`{type: object, properties: {record: {}}}`, "record: an empty schema"},
		{`{type: array, items: {type: string, nullable}}`, "nullable: null value"},
	} {
		var v any
		if err := yaml.Unmarshal([]byte(tc.yaml), &v); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(lintSchema("s", v), "\n")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.yaml, got, tc.want)
		}
	}
	var ok any
	_ = yaml.Unmarshal([]byte(`{type: object, required: [a], properties: {a: {type: string, description: "a, b"}}}`), &ok)
	if p := lintSchema("s", ok); len(p) != 0 {
		t.Errorf("a quoted comma refused: %v", p)
	}
}

// TestOpenAPIWriteTextLimits: every free-text field a write schema takes (a
// name, title, description, comment, message, body, text, address, units or
// location) states the handler's length limit, so a client learns it from the
// description rather than from a 400. textLimitReasons records the fields
// whose limit JSON Schema cannot state.
func TestOpenAPIWriteTextLimits(t *testing.T) {
	t.Parallel()
	// A limit in bytes is stated as maxLength too (a text of N bytes has at
	// most N characters), so no field needs a reason today.
	textLimitReasons := map[string]string{}
	textFields := map[string]bool{"name": true, "title": true, "description": true, "comments": true, "message": true,
		"body": true, "text": true, "address": true, "units": true, "location": true}
	var src apiSource
	if err := yaml.Unmarshal(openAPISource, &src); err != nil {
		t.Fatal(err)
	}
	isWrite := func(n string) bool {
		for _, s := range []string{"Write", "Create", "Form", "Sign"} {
			if strings.HasSuffix(n, s) {
				return true
			}
		}
		return n == "Register"
	}
	var walk func(name string, s any)
	walk = func(name string, s any) {
		m, _ := s.(map[string]any)
		props, _ := m["properties"].(map[string]any)
		for k, v := range props {
			p, _ := v.(map[string]any)
			if !textFields[k] || p == nil || !typeHas(p["type"], "string") || p["maxLength"] != nil || p["enum"] != nil {
				continue
			}
			if textLimitReasons[name+"."+k] == "" {
				t.Errorf("%s.%s: a free-text field of a write schema states no maxLength (add the handler's limit, or a reason)", name, k)
			}
		}
		for _, key := range []string{"allOf", "oneOf", "anyOf"} {
			list, _ := m[key].([]any)
			for _, b := range list {
				walk(name, b)
			}
		}
	}
	for name, s := range src.Schemas {
		if isWrite(name) {
			walk(name, s)
		}
	}
}

// typeHas reports whether a schema's type (a name or a list of names) includes want.
func typeHas(t any, want string) bool {
	switch v := t.(type) {
	case string:
		return v == want
	case []any:
		for _, x := range v {
			if x == want {
				return true
			}
		}
	}
	return false
}

// TestOpenAPIFormFieldsAgree: the multipart form fields the server reads
// by rule accept exactly what openapi.yaml's enum or pattern does, so a
// value the schema refuses (" 2", "0x2", "+5") is refused by the server too.
func TestOpenAPIFormFieldsAgree(t *testing.T) {
	t.Parallel()
	d, err := apiDocument()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(d.json)
	if err != nil {
		t.Fatal(err)
	}
	values := []string{"", "0", "1", "2", "3", "255", "256", " 2", "2 ", "02", "0x2", "+5", "-1", "true", "false", " true", "T", "9999999999", "99999999999", "1.5"}
	for _, c := range []struct {
		schema, field string
		server        func(string) bool
	}{
		{"UserPatchForm", "allow_connections_from", func(v string) bool { _, ok := formAllowFrom(v); return ok }},
		{"UserPatchForm", "allow_shares_from", func(v string) bool { _, ok := formAllowFrom(v); return ok }},
		{"UserPatchForm", "enable_email_notifications", func(v string) bool { _, err := strconv.ParseBool(v); return err == nil }},
		{"InductionForm", "valid_for", func(v string) bool { _, ok := formSeconds(v); return ok }},
	} {
		ref := doc.Components.Schemas[c.schema]
		if ref == nil || ref.Value.Properties[c.field] == nil {
			t.Fatalf("%s.%s is not in openapi.yaml", c.schema, c.field)
		}
		s := ref.Value.Properties[c.field].Value
		for _, v := range values {
			schemaOK := s.VisitJSON(v) == nil
			if got := c.server(v); got != schemaOK {
				t.Errorf("%s.%s %q: the server accepts %v, the schema %v", c.schema, c.field, v, got, schemaOK)
			}
		}
	}
}
