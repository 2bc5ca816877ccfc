package devserver

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// internalPortCount is how many ports the services behind the frontend
// take: history, matching and worker gRPC, then four membership ports.
const internalPortCount = 7

// PortsFile is where a server on file remembers its internal ports, so
// that the next start on the same file takes them again.
func PortsFile(file string) string {
	ext := filepath.Ext(file)
	return strings.TrimSuffix(file, ext) + "-ports.json"
}

// rememberedPorts are the internal ports for a server on file: those of
// its last start when every one is still free, else fresh ones, written
// beside the file for the next start. A server restarted on new ports
// finds its last incarnation in the membership table and routes to those
// dead addresses until ringpop declares them gone, about 45 s in which
// no workflow moves; on the same ports the old entries are itself.
func rememberedPorts(file, host string) ([]int, error) {
	path := PortsFile(file)
	if ports, ok := readPorts(path); ok && reclaimAll(host, ports) {
		return ports, nil
	}
	ports := make([]int, internalPortCount)
	for i := range ports {
		p, err := freePort(host)
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	if err := writePorts(path, ports); err != nil {
		return nil, err
	}
	return ports, nil
}

// portsRecord is the JSON of a ports file.
type portsRecord struct {
	Internal []int `json:"internal"`
}

// readPorts reads a ports file; a missing or malformed one is no answer,
// since fresh ports are always a correct (only slower) choice.
func readPorts(path string) ([]int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var r portsRecord
	if json.Unmarshal(b, &r) != nil || len(r.Internal) != internalPortCount {
		return nil, false
	}
	for _, p := range r.Internal {
		if p <= 0 || p > 65535 {
			return nil, false
		}
	}
	return r.Internal, true
}

// writePorts replaces the ports file in one rename, so a start killed
// midway leaves the old file or the new one, never half of one.
func writePorts(path string, ports []int) error {
	b, err := json.Marshal(portsRecord{Internal: ports})
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("remember the Temporal server's ports: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("remember the Temporal server's ports: %w", err)
	}
	return nil
}

// reclaimAll claims ports for this process (those it handed out before
// are its own already) and reports whether every one can be bound now.
func reclaimAll(host string, ports []int) bool {
	for _, p := range ports {
		if !reclaimPort(p) {
			return false
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			return false
		}
		if l.Close() != nil {
			return false
		}
	}
	return true
}

// reclaimPort is claimPort for a port this process may hold already.
func reclaimPort(p int) bool {
	claims.Lock()
	_, mine := claims.ports[p]
	claims.Unlock()
	return mine || claimPort(p)
}
