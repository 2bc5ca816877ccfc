package intent

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// mention is a catalogue entry (service ID or resource name) found at a
// token position.
type mention struct {
	id  string
	pos int
}

// synonym is one tokenized catalogue name.
type synonym struct {
	id    string
	words []string
	chars int
}

// Compound words: German glues nouns together ("Reifenwechseltermin",
// "Inspektionstermin"). Long synonyms may occur anywhere inside a token,
// medium ones only at its start; short ones ("tire", "öl") must match a
// whole token so "entire" is no tire and "Kundenservice" no inspection.
const (
	minInfix  = 8
	minPrefix = 7
	// maxGap is how many foreign tokens may sit inside a multi-word synonym
	// ("change my tires", "Reifen am Dienstag wechseln").
	maxGap = 2
)

// catalogueSynonyms tokenizes the names, longest first, so "oil service"
// claims its tokens before "service" can.
func catalogueSynonyms(ids []string, names [][]string) []synonym {
	var out []synonym
	for k, id := range ids {
		for _, n := range names[k] {
			toks := tokenize(n)
			if len(toks) == 0 {
				continue
			}
			syn := synonym{id: id}
			for _, t := range toks {
				syn.words = append(syn.words, t.s)
				syn.chars += len(t.s)
			}
			out = append(out, syn)
		}
	}
	slices.SortStableFunc(out, func(a, b synonym) int {
		if c := cmp.Compare(len(b.words), len(a.words)); c != 0 {
			return c
		}
		return cmp.Compare(b.chars, a.chars)
	})
	return out
}

// synonymCache keeps tokenized catalogues: tokenizing every synonym on
// every message dominated the cost of Extract. The key is the catalogue's
// content, so an edited catalogue is never served stale; the cache is
// dropped when it grows past a few tenants' worth.
var synonymCache struct {
	sync.Mutex
	m map[string][]synonym
}

func cachedSynonyms(ids []string, names [][]string) []synonym {
	var key strings.Builder
	for k, id := range ids {
		key.WriteString(id)
		for _, n := range names[k] {
			key.WriteByte(0)
			key.WriteString(n)
		}
		key.WriteByte(1)
	}
	synonymCache.Lock()
	defer synonymCache.Unlock()
	if syns, ok := synonymCache.m[key.String()]; ok {
		return syns
	}
	if synonymCache.m == nil || len(synonymCache.m) >= 256 {
		synonymCache.m = map[string][]synonym{}
	}
	syns := catalogueSynonyms(ids, names)
	synonymCache.m[key.String()] = syns
	return syns
}

// matchServices finds catalogue services and marks their tokens used, so
// no later parser reads "Bühne 1" or a service name as a date or time.
func (p *parser) matchServices() []mention {
	ids := make([]string, len(p.cat.Services))
	names := make([][]string, len(p.cat.Services))
	for i, s := range p.cat.Services {
		ids[i], names[i] = s.ID, s.Names
	}
	return p.matchSynonyms(cachedSynonyms(ids, names), true)
}

// matchResources finds named resources; they must be written out in full.
func (p *parser) matchResources() []mention {
	ids := make([]string, len(p.cat.Resources))
	names := make([][]string, len(p.cat.Resources))
	for i, r := range p.cat.Resources {
		ids[i], names[i] = r, []string{r}
	}
	return p.matchSynonyms(cachedSynonyms(ids, names), false)
}

func (p *parser) matchSynonyms(syns []synonym, loose bool) []mention {
	var out []mention
	for _, syn := range syns {
		for i := range p.toks {
			if p.used[i] {
				continue
			}
			if pos := p.matchAt(i, syn.words, loose); pos != nil {
				for _, k := range pos {
					p.used[k] = true
				}
				out = append(out, mention{id: syn.id, pos: i})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b mention) int { return cmp.Compare(a.pos, b.pos) })
	return out
}

// matchAt returns the token positions of words starting at i, or nil.
func (p *parser) matchAt(i int, words []string, loose bool) []int {
	if !wordMatches(p.toks[i].s, words[0], loose && len(words) == 1) {
		return nil
	}
	pos := []int{i}
	j := i
	for _, w := range words[1:] {
		found := false
		for gap := 0; gap <= maxGap && (loose || gap == 0); gap++ {
			k := j + 1 + gap
			if k >= len(p.toks) || p.toks[k-1].brk {
				break
			}
			if !p.used[k] && wordMatches(p.toks[k].s, w, false) {
				pos, j, found = append(pos, k), k, true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return pos
}

// wordMatches compares a token with a synonym word, allowing an English
// plural "s" and, for single-word synonyms, compounds.
func wordMatches(tok, w string, compound bool) bool {
	if tok == w || (len(tok) == len(w)+1 && tok[len(w)] == 's' && strings.HasPrefix(tok, w)) {
		return true
	}
	if !compound {
		return false
	}
	return (len(w) >= minInfix && strings.Contains(tok, w)) || (len(w) >= minPrefix && strings.HasPrefix(tok, w))
}

// distinctIDs returns the mentioned IDs in order of first appearance.
func distinctIDs(ms []mention) []string {
	var ids []string
	seen := map[string]bool{}
	for _, m := range ms {
		if !seen[m.id] {
			seen[m.id] = true
			ids = append(ids, m.id)
		}
	}
	return ids
}
