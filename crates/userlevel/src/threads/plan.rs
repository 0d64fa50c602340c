//! Splitting one configuration over several threads.
//!
//! Every thread runs a router of its own: the engine's routers are
//! single-threaded by design, so no element is ever touched by two threads
//! and the hot path needs no locks. The plan decides which elements each
//! thread's router holds.
//!
//! *Partition* (`-j N`, Click's model): elements that call each other — a
//! push from a source up to the Queues it fills, a pull from a sink back to
//! the Queues it drains — form a group that must run on one thread. Groups
//! meet only at *boundary* elements, which have push inputs and pull
//! outputs (Queue and its kin); a boundary element runs with its puller,
//! and where a pusher on another thread feeds it, the connection becomes a
//! cross-thread link: a hidden `ThreadTx` element on the pushing thread
//! moves packets through a lock-free ring to a hidden `ThreadRx` element
//! that pushes them into the Queue. StaticThreadSched places groups; the
//! rest are spread so that each thread gets about the same number of tasks.
//!
//! *Replicate* (`-j N --replicate`): every thread runs a whole copy of the
//! configuration (the shared-nothing model of DPDK and VPP workers); device
//! elements share their interface between the copies by flow hash.

use click::lang::{FlatConfig, FlatConnection, FlatElement};
use click::router::Graph;
use std::collections::BTreeMap;

/// Classes that cannot run as several copies: each copy would read or
/// write the same file.
const NOT_REPLICABLE: &[&str] = &["FromDump", "ToDump", "FromIPSummaryDump", "ToIPSummaryDump"];
/// Classes that run in the first copy only (they serve the whole set).
const FIRST_COPY_ONLY: &[&str] = &["ControlSocket"];

/// A cross-thread link: one ring from a pushing thread into one input of a
/// boundary element on another thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    pub from_thread: usize,
    pub to_thread: usize,
    /// The boundary element (original index) and its input port.
    pub to_elem: usize,
    pub to_port: usize,
    /// The hidden elements' names.
    pub tx_name: String,
    pub rx_name: String,
}

/// What runs where.
#[derive(Debug)]
pub struct Plan {
    pub nthreads: usize,
    pub replicate: bool,
    /// Each original element's thread (partition); all 0 when replicating.
    pub home: Vec<usize>,
    /// Each thread's configuration.
    pub configs: Vec<FlatConfig>,
    pub links: Vec<Link>,
    /// Elements whose task StaticThreadSched put on no thread (-1).
    pub quiescent: Vec<String>,
    /// Warnings to print (Click's wording where Click has one).
    pub warnings: Vec<String>,
}

impl Plan {
    /// The `home_thread` of each element (-1 for StaticThreadSched's -1).
    pub fn home_threads(&self, flat: &FlatConfig) -> BTreeMap<String, i64> {
        flat.elements
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let t = if self.quiescent.contains(&e.name) {
                    -1
                } else {
                    self.home[i] as i64
                };
                (e.name.clone(), t)
            })
            .collect()
    }

    /// One line per thread: what it runs (for `-t` and the tests).
    pub fn describe(&self, flat: &FlatConfig) -> String {
        let mut s = String::new();
        if self.replicate {
            s.push_str(&format!(
                "{} copies of the configuration, one per thread\n",
                self.nthreads
            ));
            return s;
        }
        for t in 0..self.nthreads {
            let names: Vec<&str> = flat
                .elements
                .iter()
                .enumerate()
                .filter(|(i, _)| self.home[*i] == t)
                .map(|(_, e)| e.name.as_str())
                .collect();
            s.push_str(&format!("thread {t}: {}\n", names.join(" ")));
        }
        for l in &self.links {
            s.push_str(&format!(
                "link: thread {} -> thread {} into {} [{}]\n",
                l.from_thread, l.to_thread, flat.elements[l.to_elem].name, l.to_port
            ));
        }
        s
    }
}

struct UnionFind(Vec<usize>);

impl UnionFind {
    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.0[a.max(b)] = a.min(b);
        }
    }
}

/// Whether element `i` separates its pushers from its pullers.
pub fn is_boundary(g: &Graph, i: usize) -> bool {
    g.nin[i] > 0
        && g.nout[i] > 0
        && g.in_push[i].iter().all(|&p| p)
        && g.out_push[i].iter().all(|&p| !p)
}

/// Whether element `i` has a task that starts work: a push source (push
/// outputs, no push inputs) or a pull sink (pull inputs, no pull outputs).
fn is_task_root(g: &Graph, i: usize) -> bool {
    let push_source = g.out_push[i].iter().any(|&p| p) && !g.in_push[i].iter().any(|&p| p);
    let pull_sink = g.in_push[i].iter().any(|&p| !p) && !g.out_push[i].iter().any(|&p| !p);
    push_source || pull_sink
}

/// StaticThreadSched's placements, later elements overriding earlier ones.
/// A name is looked up as Click does, from the StaticThreadSched's own
/// compound outwards; a name that is a compound places every element in
/// it, and a placement of a single element wins over its compound's.
/// Returns (element name → (thread or -1, whether the element was named
/// itself rather than through its compound), warnings).
fn static_placements(
    flat: &FlatConfig,
    nthreads: usize,
) -> (BTreeMap<String, (i64, bool)>, Vec<String>) {
    let names: BTreeMap<String, ()> = flat.elements.iter().map(|e| (e.name.clone(), ())).collect();
    let mut exact: Vec<(String, i64)> = Vec::new();
    let mut compound: Vec<(String, i64)> = Vec::new();
    let mut warnings = Vec::new();
    for e in flat
        .elements
        .iter()
        .filter(|e| e.class == "StaticThreadSched")
    {
        // Syntax errors are the element's to report when it is configured.
        let Ok(pairs) = click::elements::standard::staticthreadsched::parse(&e.config) else {
            continue;
        };
        for (name, mut t) in pairs {
            if t < -1 || t >= nthreads as i64 {
                warnings.push(format!(
                    "{}: While configuring '{} :: StaticThreadSched':\n  warning: thread preference {} out of range",
                    e.landmark, e.name, t
                ));
                t = if t < 0 { -1 } else { 0 };
            }
            let mut scopes: Vec<&str> = Vec::new();
            let mut prefix = e.name.as_str();
            while let Some(slash) = prefix.rfind('/') {
                prefix = &prefix[..slash];
                scopes.push(prefix);
            }
            let found = scopes
                .iter()
                .map(|p| format!("{p}/{name}"))
                .chain(core::iter::once(name.clone()))
                .find(|c| names.contains_key(c) || click::router::has_prefix(&names, c));
            match found {
                Some(c) if names.contains_key(&c) => exact.push((c, t)),
                Some(c) => compound.push((c, t)),
                // an unknown name is the element's to report
                None => {}
            }
        }
    }
    let mut pref = BTreeMap::new();
    for (c, t) in compound {
        let start = format!("{c}/");
        for n in names.keys().filter(|n| n.starts_with(&start)) {
            pref.insert(n.clone(), (t, false));
        }
    }
    for (n, t) in exact {
        pref.insert(n, (t, true));
    }
    (pref, warnings)
}

/// Plans `flat` (whose checked graph is `g`) over `nthreads` threads.
/// Errors are complete messages.
pub fn plan(
    flat: &FlatConfig,
    g: &Graph,
    nthreads: usize,
    replicate: bool,
) -> Result<Plan, Vec<String>> {
    let n = flat.elements.len();
    let nthreads = nthreads.max(1);
    let (pref, mut warnings) = static_placements(flat, nthreads);
    let quiescent: Vec<String> = pref
        .iter()
        .filter(|(_, &(t, _))| t < 0)
        .map(|(n, _)| n.clone())
        .collect();
    if replicate {
        let mut errors = Vec::new();
        for e in &flat.elements {
            if NOT_REPLICABLE.contains(&e.class.as_str()) {
                errors.push(format!(
                    "{}: '{} :: {}' cannot run as {} copies (each would use the same file); run without --replicate",
                    e.landmark, e.name, e.class, nthreads
                ));
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if let Some(e) = flat
            .elements
            .iter()
            .find(|e| e.class == "StaticThreadSched")
        {
            warnings.push(format!(
                "{}: warning: StaticThreadSched is ignored under --replicate (every thread runs a whole copy)",
                e.landmark
            ));
        }
        let mut configs = vec![flat.clone()];
        for _ in 1..nthreads {
            configs.push(without_classes(flat, FIRST_COPY_ONLY));
        }
        return Ok(Plan {
            nthreads,
            replicate,
            home: vec![0; n],
            configs,
            links: Vec::new(),
            quiescent,
            warnings,
        });
    }

    // 1. groups of elements that call each other
    let mut uf = UnionFind((0..n).collect());
    for &(f, _, t, _) in &g.connections {
        if !is_boundary(g, t) {
            uf.union(f, t);
        }
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let r = uf.find(i);
        groups.entry(r).or_default().push(i);
    }

    // 2. explicit placements
    let mut group_thread: BTreeMap<usize, usize> = BTreeMap::new();
    let mut load = vec![0usize; nthreads];
    let weight = |members: &[usize]| members.iter().filter(|&&i| is_task_root(g, i)).count();
    for (&root, members) in &groups {
        // Elements named themselves decide; a compound's placement only
        // applies to groups none of whose members was named.
        let placed_by = |strong: bool| -> Vec<(usize, usize)> {
            members
                .iter()
                .filter_map(|&i| {
                    pref.get(&flat.elements[i].name)
                        .filter(|&&(t, s)| t >= 0 && s == strong)
                        .map(|&(t, _)| (i, t as usize))
                })
                .collect()
        };
        let mut placed = placed_by(true);
        if placed.is_empty() {
            placed = placed_by(false);
        }
        let Some(&(first, t)) = placed.first() else {
            continue;
        };
        if let Some(&(other, t2)) = placed.iter().find(|(_, t2)| *t2 != t) {
            warnings.push(format!(
                "{}: warning: StaticThreadSched puts '{}' on thread {} and '{}' on thread {}, but they reach each other without a Queue between them; both run on thread {}",
                flat.elements[other].landmark,
                flat.elements[first].name,
                t,
                flat.elements[other].name,
                t2,
                t
            ));
        }
        group_thread.insert(root, t);
        load[t] += weight(members);
    }

    // 3. automatic placement: heaviest groups first, each to the least
    //    loaded thread; groups without tasks (ControlSocket, Script) stay
    //    on thread 0
    let mut rest: Vec<(usize, usize, usize)> = groups
        .iter()
        .filter(|(r, _)| !group_thread.contains_key(r))
        .map(|(&r, m)| (weight(m), m[0], r))
        .collect();
    rest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    // A configuration that places elements itself gets Click's default
    // for the rest: thread 0.
    let explicit = flat.elements.iter().any(|e| e.class == "StaticThreadSched");
    for (w, _, root) in rest {
        let t = if w == 0 || explicit {
            0
        } else {
            (0..nthreads).min_by_key(|&t| (load[t], t)).unwrap_or(0)
        };
        load[t] += w;
        group_thread.insert(root, t);
    }
    let home: Vec<usize> = (0..n).map(|i| group_thread[&uf.find(i)]).collect();

    // 4. links where a pusher feeds a boundary element on another thread
    let mut links: Vec<Link> = Vec::new();
    let mut link_of: BTreeMap<(usize, usize, usize), usize> = BTreeMap::new();
    for &(f, _, t, tp) in &g.connections {
        if home[f] != home[t] {
            let key = (home[f], t, tp);
            link_of.entry(key).or_insert_with(|| {
                let base = &flat.elements[t].name;
                links.push(Link {
                    from_thread: home[f],
                    to_thread: home[t],
                    to_elem: t,
                    to_port: tp,
                    tx_name: format!("{base}@@tx{}_{tp}", home[f]),
                    rx_name: format!("{base}@@rx{}_{tp}", home[f]),
                });
                links.len() - 1
            });
        }
    }

    // 5. each thread's configuration
    let mut configs = Vec::with_capacity(nthreads);
    for th in 0..nthreads {
        let mut c = FlatConfig {
            requirements: flat.requirements.clone(),
            ..FlatConfig::default()
        };
        let mut local = vec![usize::MAX; n];
        for (i, e) in flat.elements.iter().enumerate() {
            if home[i] == th {
                local[i] = c.elements.len();
                c.elements.push(e.clone());
            }
        }
        let mut hidden = BTreeMap::new();
        for (li, l) in links.iter().enumerate() {
            let lm = flat.elements[l.to_elem].landmark.clone();
            if l.from_thread == th {
                hidden.insert(("tx", li), c.elements.len());
                c.elements.push(FlatElement {
                    name: l.tx_name.clone(),
                    class: "ThreadTx".into(),
                    config: li.to_string(),
                    landmark: lm,
                });
            } else if l.to_thread == th {
                hidden.insert(("rx", li), c.elements.len());
                c.elements.push(FlatElement {
                    name: l.rx_name.clone(),
                    class: "ThreadRx".into(),
                    config: li.to_string(),
                    landmark: lm,
                });
            }
        }
        for conn in &flat.connections {
            let (f, t) = (conn.from, conn.to);
            if home[f] == th && home[t] == th {
                c.connections.push(FlatConnection {
                    from: local[f],
                    to: local[t],
                    ..conn.clone()
                });
            } else if home[f] == th {
                let li = link_of[&(th, t, conn.to_port)];
                c.connections.push(FlatConnection {
                    from: local[f],
                    to: hidden[&("tx", li)],
                    to_port: 0,
                    ..conn.clone()
                });
            }
        }
        for (li, l) in links.iter().enumerate() {
            if l.to_thread == th {
                c.connections.push(FlatConnection {
                    from: hidden[&("rx", li)],
                    from_port: 0,
                    to: local[l.to_elem],
                    to_port: l.to_port,
                    landmark: flat.elements[l.to_elem].landmark.clone(),
                });
            }
        }
        configs.push(c);
    }
    Ok(Plan {
        nthreads,
        replicate,
        home,
        configs,
        links,
        quiescent,
        warnings,
    })
}

/// `flat` without the elements of these classes (they have no ports).
fn without_classes(flat: &FlatConfig, classes: &[&str]) -> FlatConfig {
    let keep: Vec<bool> = flat
        .elements
        .iter()
        .map(|e| !classes.contains(&e.class.as_str()))
        .collect();
    let mut map = vec![usize::MAX; keep.len()];
    let mut c = FlatConfig {
        requirements: flat.requirements.clone(),
        ..FlatConfig::default()
    };
    for (i, e) in flat.elements.iter().enumerate() {
        if keep[i] {
            map[i] = c.elements.len();
            c.elements.push(e.clone());
        }
    }
    for conn in &flat.connections {
        if keep[conn.from] && keep[conn.to] {
            c.connections.push(FlatConnection {
                from: map[conn.from],
                to: map[conn.to],
                ..conn.clone()
            });
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use click::registry::Registry;

    fn registry() -> Registry {
        let mut r = crate::elements::registry();
        crate::threads::register_hidden(&mut r);
        r
    }

    fn planned(cfg: &str, n: usize, replicate: bool) -> (FlatConfig, Plan) {
        let flat = click::lang::parse_config(cfg, "t.click", &[]).unwrap();
        let g = click::router::check_graph(&flat, &registry()).unwrap();
        let p = plan(&flat, &g, n, replicate).unwrap();
        // every thread's configuration is a valid graph of its own
        for c in &p.configs {
            if let Err(e) = click::router::check_graph(c, &registry()) {
                panic!("{}\n{}", e.join("\n"), click::lang::unparse(c));
            }
        }
        (flat, p)
    }

    fn home_of(flat: &FlatConfig, p: &Plan, name: &str) -> usize {
        p.home[flat.element_index(name).unwrap()]
    }

    #[test]
    fn queues_split_and_link() {
        let (flat, p) = planned(
            "a :: InfiniteSource -> x :: Counter -> q :: Queue -> u :: Unqueue -> d :: Discard;
             b :: InfiniteSource -> y :: Counter -> q;
             StaticThreadSched(a 0, b 1, u 1);",
            2,
            false,
        );
        assert_eq!(home_of(&flat, &p, "x"), 0);
        assert_eq!(home_of(&flat, &p, "y"), 1);
        for e in ["q", "u", "d"] {
            assert_eq!(home_of(&flat, &p, e), 1, "{e}");
        }
        assert_eq!(p.links.len(), 1);
        let l = &p.links[0];
        assert_eq!((l.from_thread, l.to_thread, l.to_port), (0, 1, 0));
        assert_eq!(l.tx_name, "q@@tx0_0");
        assert!(p.configs[0].element_index("q@@tx0_0").is_some());
        assert!(p.configs[1].element_index("q@@rx0_0").is_some());
        assert!(p.configs[0].element_index("q").is_none());
    }

    #[test]
    fn pull_paths_stay_with_their_sink() {
        // RatedUnqueue pulls through PullNull from the Queue: one group
        let (flat, p) = planned(
            "s :: InfiniteSource -> q :: Queue -> n :: PullNull -> r :: RatedUnqueue -> Discard;
             StaticThreadSched(s 0, r 1);",
            2,
            false,
        );
        assert_eq!(home_of(&flat, &p, "n"), 1);
        assert_eq!(home_of(&flat, &p, "q"), 1);
        assert_eq!(home_of(&flat, &p, "s"), 0);
    }

    #[test]
    fn automatic_placement_balances_tasks() {
        let (flat, p) = planned(
            "a :: InfiniteSource -> Discard; b :: InfiniteSource -> Discard;
             c :: InfiniteSource -> Discard; d :: InfiniteSource -> Discard;
             Script(wait 1);",
            2,
            false,
        );
        let per: Vec<usize> = (0..2)
            .map(|t| {
                ["a", "b", "c", "d"]
                    .iter()
                    .filter(|e| home_of(&flat, &p, e) == t)
                    .count()
            })
            .collect();
        assert_eq!(per, [2, 2]);
        assert!(p.links.is_empty());
        assert_eq!(home_of(&flat, &p, "Script@9"), 0);
    }

    #[test]
    fn replicate_copies_all_but_control_sockets() {
        let (_, p) = planned(
            "InfiniteSource -> Counter -> Discard; ControlSocket(TCP, 0);",
            3,
            true,
        );
        assert_eq!(p.configs.len(), 3);
        assert_eq!(p.configs[0].elements.len(), 4);
        assert_eq!(p.configs[2].elements.len(), 3);
        assert!(p.links.is_empty());
    }

    #[test]
    fn boundary_is_push_in_pull_out() {
        let flat = click::lang::parse_config(
            "InfiniteSource -> q :: Queue -> Unqueue -> t :: Tee -> Discard; t[1] -> Discard;",
            "t.click",
            &[],
        )
        .unwrap();
        let g = click::router::check_graph(&flat, &registry()).unwrap();
        let idx = |n: &str| flat.element_index(n).unwrap();
        assert!(is_boundary(&g, idx("q")));
        assert!(!is_boundary(&g, idx("t")));
    }
}

#[cfg(test)]
mod random_tests {
    use super::*;
    use click::registry::Registry;

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// A random configuration: several source paths, some through a Queue
    /// and an Unqueue, with Tees feeding other paths' Queues.
    fn random_config(r: &mut Lcg) -> String {
        let paths = 1 + r.below(5);
        let mut s = String::new();
        let mut queues = Vec::new();
        for p in 0..paths {
            s.push_str(&format!("src{p} :: InfiniteSource(LIMIT 1)"));
            for k in 0..r.below(3) {
                s.push_str(&format!(" -> c{p}_{k} :: Counter"));
            }
            if r.below(2) == 0 {
                s.push_str(&format!(" -> t{p} :: Tee(2)"));
            }
            if r.below(3) > 0 {
                s.push_str(&format!(" -> q{p} :: Queue -> u{p} :: Unqueue"));
                queues.push(p);
            }
            s.push_str(" -> Discard;\n");
        }
        for p in 0..paths {
            if s.contains(&format!("t{p} :: Tee")) {
                if queues.is_empty() {
                    s.push_str(&format!("t{p}[1] -> Discard;\n"));
                } else {
                    let q = queues[r.below(queues.len() as u64) as usize];
                    s.push_str(&format!("t{p}[1] -> q{q};\n"));
                }
            }
        }
        if r.below(2) == 0 {
            let names: Vec<String> = (0..paths)
                .map(|p| format!("src{p} {}", r.below(4) as i64 - 1))
                .collect();
            s.push_str(&format!("StaticThreadSched({});\n", names.join(", ")));
        }
        s
    }

    #[test]
    fn random_plans_are_sound() {
        let mut reg = crate::elements::registry();
        crate::threads::register_hidden(&mut reg);
        let reg: Registry = reg;
        let mut r = Lcg(0x5eed);
        for _ in 0..300 {
            let text = random_config(&mut r);
            let flat = click::lang::parse_config(&text, "r.click", &[]).unwrap();
            let g = click::router::check_graph(&flat, &reg)
                .unwrap_or_else(|e| panic!("{}\n{text}", e.join("\n")));
            let n = 1 + r.below(4) as usize;
            let p = plan(&flat, &g, n, false).unwrap();
            // every element runs on exactly one thread
            for (i, e) in flat.elements.iter().enumerate() {
                let on: Vec<usize> = (0..n)
                    .filter(|&t| p.configs[t].element_index(&e.name).is_some())
                    .collect();
                assert_eq!(on, [p.home[i]], "{} in {text}", e.name);
            }
            // every thread's part is a valid graph
            for c in &p.configs {
                if let Err(e) = click::router::check_graph(c, &reg) {
                    panic!("{}\n{text}\n{}", e.join("\n"), click::lang::unparse(c));
                }
            }
            // connections stay local unless they feed a Queue on another
            // thread, and then they go through that Queue's link
            for c in &flat.connections {
                let (f, t) = (c.from, c.to);
                if p.home[f] == p.home[t] {
                    continue;
                }
                assert!(is_boundary(&g, t), "{text}");
                assert!(
                    p.links.iter().any(|l| l.to_elem == t
                        && l.to_port == c.to_port
                        && l.from_thread == p.home[f]
                        && l.to_thread == p.home[t]),
                    "{text}"
                );
            }
        }
    }
}
