package resctrlsim

import (
	"context"
	"hash/fnv"
	"strconv"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/resctrl-mon/resctrl-mon/lib/resctrlfs"
)

// dirNode is any directory of the mount. Its entries come from the model on every lookup,
// so mkdir, rmdir and a simulated re-mount show at once.
type dirNode struct {
	fs.Inode
	m      *model
	kind   dirKind
	g      *group // nil for the mount's root directory: always the current root group
	domain string
	idx    int
}

// fileNode is any file of the mount.
type fileNode struct {
	fs.Inode
	m *model
	e entry
	g *group
}

var (
	_ fs.NodeStatfser  = (*dirNode)(nil)
	_ fs.NodeStatfser  = (*fileNode)(nil)
	_ fs.NodeLookuper  = (*dirNode)(nil)
	_ fs.NodeReaddirer = (*dirNode)(nil)
	_ fs.NodeMkdirer   = (*dirNode)(nil)
	_ fs.NodeRmdirer   = (*dirNode)(nil)
	_ fs.NodeCreater   = (*dirNode)(nil)
	_ fs.NodeUnlinker  = (*dirNode)(nil)
	_ fs.NodeRenamer   = (*dirNode)(nil)
	_ fs.NodeGetattrer = (*dirNode)(nil)
	_ fs.NodeOpener    = (*fileNode)(nil)
	_ fs.NodeGetattrer = (*fileNode)(nil)
	_ fs.NodeSetattrer = (*fileNode)(nil)
)

func (d *dirNode) group() *group {
	if d.g == nil {
		return d.m.root
	}
	return d.g
}

// entries lists the directory; the caller holds the model's lock.
func (d *dirNode) entries() ([]entry, syscall.Errno) {
	es, errno := d.staticEntries()
	if errno != 0 {
		return nil, errno
	}
	g := d.group()
	groups := g.mons
	switch {
	case d.kind == dirGroup && g.kind == kindRoot:
		groups = g.ctrls
	case d.kind != dirMonGroups:
		return es, 0
	}
	for _, c := range sortedGroups(groups) {
		es = append(es, entry{name: c.name, dir: true, sub: dirGroup})
	}
	return es, 0
}

// staticEntries are the names the kernel makes in the directory, groups aside.
func (d *dirNode) staticEntries() ([]entry, syscall.Errno) {
	g := d.group()
	if g.dead {
		return nil, syscall.ENOENT
	}
	o := d.m.opts
	switch d.kind {
	case dirGroup:
		return groupEntries(g.kind, o), 0
	case dirMonGroups:
		return nil, 0
	case dirMonData:
		return monDataEntries(o), 0
	case dirDomain:
		return domainEntries(d.domain, d.idx, o), 0
	case dirSubDomain:
		return subDomainEntries(d.idx), 0
	case dirInfo:
		return infoEntries(o), 0
	case dirInfoRes:
		return infoResEntries(d.domain, o), 0
	case dirEventConfigs:
		return eventConfigsEntries(), 0
	case dirEventConfig:
		return eventConfigEntries(d.domain), 0
	}
	return nil, syscall.ENOENT
}

// child resolves the group a group-directory entry stands for.
func (d *dirNode) child(name string) *group {
	g := d.group()
	if d.kind == dirMonGroups {
		return g.mons[name]
	}
	if d.kind == dirGroup && g.kind == kindRoot {
		return g.ctrls[name]
	}
	return nil
}

func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if d.kind == dirMonGroups {
		d.m.delay(OpLookup)
	}
	d.m.lockTree()
	defer d.m.unlock()
	if d.group().dead {
		return nil, syscall.ENOENT
	}
	// A group by name straight from the map: a listing of thousands of groups per lookup
	// would make the simulator, not the code under test, what tests measure.
	if d.child(name) != nil {
		return d.newChild(ctx, entry{name: name, dir: true, sub: dirGroup}, out), 0
	}
	es, errno := d.staticEntries()
	if errno != 0 {
		return nil, errno
	}
	for _, e := range es {
		if e.name == name {
			return d.newChild(ctx, e, out), 0
		}
	}
	return nil, syscall.ENOENT
}

// newChild makes the inode for an entry. Inode numbers are derived from the group's
// identity and the entry, so the same object keeps its number and a re-created group of the
// same name gets a new one.
func (d *dirNode) newChild(ctx context.Context, e entry, out *fuse.EntryOut) *fs.Inode {
	g := d.group()
	// A domain's (and an info resource's) files have the same names as their siblings':
	// without the domain in the key, mon_L3_01/mbm_total_bytes would get mon_L3_00's inode
	// number, and go-fuse would hand back mon_L3_00's node for it.
	ino := inodeNumber(g.id, d.kind, d.domain+"/"+strconv.Itoa(d.idx)+"/"+e.name)
	var node fs.InodeEmbedder
	mode := uint32(fuse.S_IFREG)
	if e.dir {
		mode = fuse.S_IFDIR
		child := &dirNode{m: d.m, kind: e.sub, g: g, domain: e.domain, idx: e.idx}
		if e.sub == dirGroup {
			child.g = d.child(e.name)
			ino = inodeNumber(child.g.id, dirGroup, "")
		}
		node = child
	} else {
		node = &fileNode{m: d.m, e: e, g: g}
	}
	out.Mode = mode | entryPerm(e)
	out.Ino = ino
	return d.NewInode(ctx, node, fs.StableAttr{Mode: mode, Ino: ino})
}

func inodeNumber(groupID uint64, kind dirKind, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(strconv.FormatUint(groupID, 10) + "/" + strconv.Itoa(int(kind)) + "/" + name))
	// go-fuse keeps 1 for the mount's root.
	return h.Sum64() | 1<<63
}

func entryPerm(e entry) uint32 {
	switch {
	case e.dir:
		return 0o755
	case e.rw:
		return 0o644
	}
	return 0o444
}

func (d *dirNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	d.m.lockTree()
	defer d.m.unlock()
	es, errno := d.entries()
	if errno != 0 {
		return nil, errno
	}
	out := make([]fuse.DirEntry, 0, len(es))
	for _, e := range es {
		mode := uint32(fuse.S_IFREG)
		if e.dir {
			mode = fuse.S_IFDIR
		}
		out = append(out, fuse.DirEntry{Name: e.name, Mode: mode})
	}
	return fs.NewListDirStream(out), 0
}

func (d *dirNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = fuse.S_IFDIR | 0o755
	return 0
}

// Statfs signs the mount as the simulator (see resctrlfs.SimulatorFiles); the rest is what
// the kernel's resctrl reports.
func (d *dirNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	statfs(out)
	return 0
}

// Mkdir makes a control group at the root and a monitoring group in any mon_groups/;
// anywhere else the kernel says EPERM.
func (d *dirNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	mon := d.kind == dirMonGroups
	atRoot := d.kind == dirGroup && d.g == nil
	if !mon && !atRoot {
		return nil, syscall.EPERM
	}
	d.m.delay(OpMkdir)
	d.m.lock()
	defer d.m.unlock()
	if _, errno := d.m.mkdir(d.group(), name, mon); errno != 0 {
		return nil, errno
	}
	return d.newChild(ctx, entry{name: name, dir: true, sub: dirGroup}, out), 0
}

func (d *dirNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	d.m.delay(OpRmdir)
	d.m.lock()
	defer d.m.unlock()
	if g := d.child(name); g != nil {
		return d.m.rmdir(g)
	}
	es, errno := d.entries()
	if errno != 0 {
		return errno
	}
	for _, e := range es {
		if e.name == name {
			return syscall.EPERM
		}
	}
	return syscall.ENOENT
}

func (d *dirNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EACCES
}

func (d *dirNode) Unlink(ctx context.Context, name string) syscall.Errno { return syscall.EPERM }

func (d *dirNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return syscall.EPERM
}

func (f *fileNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = fuse.S_IFREG | entryPerm(f.e)
	return 0
}

// Statfs: as for a directory.
func (f *fileNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	statfs(out)
	return 0
}

func statfs(out *fuse.StatfsOut) {
	*out = fuse.StatfsOut{Bsize: 4096, Frsize: 4096, NameLen: 255, Files: resctrlfs.SimulatorFiles}
}

// Setattr accepts the truncation that open(O_TRUNC) asks for, as `echo 1 > tasks` does.
func (f *fileNode) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if sz, ok := in.GetSize(); ok && (sz != 0 || !f.e.rw) {
		return syscall.EACCES
	}
	return f.Getattr(ctx, fh, out)
}

func (f *fileNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY && !f.e.rw {
		return nil, 0, syscall.EACCES
	}
	// Direct I/O: every read and write reaches us, as every access to a kernfs file
	// reaches the kernel, and each write(2) arrives as one write.
	return &handle{f: f}, fuse.FOPEN_DIRECT_IO, 0
}

// handle is an open file. Like a seq_file, its text is made at the first read and then
// served from there, so a reader sees one consistent snapshot.
type handle struct {
	f    *fileNode
	text []byte
	made bool
}

var (
	_ fs.FileReader  = (*handle)(nil)
	_ fs.FileWriter  = (*handle)(nil)
	_ fs.FileFlusher = (*handle)(nil)
)

// Flush says FUSE has no flush here (ENOSYS), so the kernel sends none again on this mount:
// kernfs has no flush either (a write takes effect in write(2), close(2) does nothing), and
// a flush is a round trip on every close, a third of a tasks write's, measured in the NRI
// adapter's and the hook's time as if the kernel's resctrl cost it.
func (h *handle) Flush(ctx context.Context) syscall.Errno { return syscall.ENOSYS }

func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if !h.made || off == 0 {
		text, errno := h.f.render()
		if errno != 0 {
			return nil, errno
		}
		h.text, h.made = []byte(text), true
	}
	if off >= int64(len(h.text)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(off+int64(len(dest)), int64(len(h.text)))
	return fuse.ReadResultData(h.text[off:end]), 0
}

func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	caller := 0
	if c, ok := fuse.FromContext(ctx); ok {
		caller = int(c.Pid)
	}
	if errno := h.f.write(data, caller); errno != 0 {
		return 0, errno
	}
	return uint32(len(data)), 0
}

// render produces a file's text.
func (f *fileNode) render() (string, syscall.Errno) {
	m, g := f.m, f.g
	switch f.e.file {
	case fileTasks:
		m.delay(OpTasksRead)
	case fileCounter:
		m.delay(OpCounterRead)
	}
	m.lock()
	defer m.unlock()
	if g.dead {
		return "", syscall.ENOENT
	}
	switch f.e.file {
	case fileTasks:
		tids, errno := m.listTasks(g)
		var b strings.Builder
		for _, t := range tids {
			b.WriteString(strconv.Itoa(t) + "\n")
		}
		return b.String(), errno
	case fileCPUs:
		return formatCPUMask(g.cpus) + "\n", 0
	case fileCPUsList:
		return formatCPUList(g.cpus) + "\n", 0
	case fileSchemata:
		return g.schemata + "\n", 0
	case fileMode:
		return "shareable\n", 0
	case fileMonHWID:
		return strconv.Itoa(g.rmid) + "\n", 0
	case fileCtrlHWID:
		return strconv.Itoa(g.closid) + "\n", 0
	case fileCounter:
		if f.e.sum {
			return m.readSummed(g, f.e.idx, f.e.name)
		}
		return m.readCounter(g, f.e.domain, f.e.idx, f.e.name)
	case fileLastCmd:
		return m.lastCmd + "\n", 0
	case fileThreshold:
		return m.renderThreshold(), 0
	case fileIOAlloc:
		return m.renderIOAlloc(), 0
	case fileAssignMode:
		return m.renderAssignMode(), 0
	case fileNumCntrs:
		return perDomain(m.opts.L3Domains, func(int) int { return m.opts.MBMCounters }), 0
	case fileAvailCntrs:
		return m.renderAvailable()
	case fileOnMkdir:
		return m.renderOnMkdir()
	case fileEventFilter:
		return m.renderEventFilter(f.e.domain)
	case fileAssignments:
		return m.renderAssignments(g)
	}
	return f.e.text, 0
}

func (f *fileNode) write(data []byte, caller int) syscall.Errno {
	if f.e.file == fileTasks {
		f.m.delay(OpTasksWrite)
	}
	f.m.lock()
	defer f.m.unlock()
	switch f.e.file {
	case fileTasks:
		return f.m.writeTasks(f.g, data, caller)
	case fileCPUs, fileCPUsList:
		return f.m.writeCPUs(f.g, data, f.e.file == fileCPUsList)
	case fileSchemata:
		return f.m.writeSchemata(f.g, data)
	case fileThreshold:
		return f.m.writeThreshold(data)
	case fileIOAlloc:
		return f.m.writeIOAlloc(data)
	case fileAssignMode:
		return f.m.writeAssignMode(data)
	case fileOnMkdir:
		return f.m.writeOnMkdir(data)
	case fileAssignments:
		return f.m.writeAssignments(f.g, data)
	}
	return syscall.EACCES
}
