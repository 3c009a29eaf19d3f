/* The compiled build's C extension (hatch_build.py; docs/planning.md, "Speed"):
 *   Hff         hFF for tasks of integer costs without conditional effects or axioms;
 *   Successors  successor generation (TaskSpace.successors) for tasks without
 *               conditional effects or axioms.
 * Each does what its Python counterpart does, step for step, so that a plan is
 * the same bytes with or without this module.
 *
 * Hff:
 * The same algorithm as heuristics/_relaxed.py (Relaxation._buckets_add) and
 * heuristics/ff.py, step for step, so that both give the same value and the
 * same preferred operators on every state, and a plan is the same bytes with
 * or without this module (tests/test_build.py, tests/planning/test_ff_native.py):
 *   - the relaxed exploration settles facts by cost with a FIFO per cost: the
 *     facts of the state first, lowest first, then the free groups' effects;
 *     it stops as soon as every goal fact is settled;
 *   - a fact's supporter is the operator of the first effect that gave it its
 *     cost (Relaxation orders each group's effects by operator id);
 *   - the relaxed plan comes from a stack seeded with the goals' supporters in
 *     goal order.
 * heuristics/_ff_native.py flattens a Relaxation into the int lists this
 * module copies once, checking every index; an evaluation allocates nothing
 * but its result.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define UNREACHED ((int64_t)1 << 60)
#define MAX_COST ((int64_t)1 << 40)

typedef struct {
    int32_t *data;
    Py_ssize_t len, cap;
} IntVec;

static int vec_push(IntVec *v, int32_t x) {
    if (v->len == v->cap) {
        Py_ssize_t cap = v->cap ? v->cap * 2 : 16;
        int32_t *data = PyMem_Realloc(v->data, (size_t)cap * sizeof(int32_t));
        if (!data) {
            PyErr_NoMemory();
            return -1;
        }
        v->data = data;
        v->cap = cap;
    }
    v->data[v->len++] = x;
    return 0;
}

typedef struct {
    int64_t cost;
    int32_t start, end; /* a slice of the effect pairs */
} Entry;

typedef struct {
    PyObject_HEAD
    Py_ssize_t n_facts, n_ops, n_groups, n_goals, n_free, n_bytes;
    int32_t *goals;
    char *is_goal;
    int32_t *eff_fact, *eff_op;
    Entry *free;
    int32_t *direct_start;
    Entry *direct;
    int32_t *counted_start, *counted;
    Entry *groups;
    int32_t *group_size;
    int32_t *pre_start, *pre;
    int64_t *op_cost;
    int32_t *neg_start, *neg;
    /* scratch, reused by every evaluation */
    int64_t *cost;
    int32_t *supporter;
    int32_t *count;
    int64_t *sum;
    uint32_t *mark;
    uint32_t stamp;
    int32_t *stack;
    unsigned char *state;
    IntVec *buckets;
    Py_ssize_t n_buckets;
} Hff;

static void Hff_dealloc(Hff *self) {
    void *owned[] = {
        self->goals, self->is_goal, self->eff_fact, self->eff_op, self->free,
        self->direct_start, self->direct, self->counted_start, self->counted,
        self->groups, self->group_size, self->pre_start, self->pre, self->op_cost,
        self->neg_start, self->neg, self->cost, self->supporter, self->count,
        self->sum, self->mark, self->stack, self->state,
    };
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) PyMem_Free(owned[i]);
    if (self->buckets) {
        for (Py_ssize_t i = 0; i < self->n_buckets; i++) PyMem_Free(self->buckets[i].data);
        PyMem_Free(self->buckets);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static void *zalloc(Py_ssize_t n, size_t size) {
    void *p = PyMem_Calloc(n > 0 ? (size_t)n : 1, size);
    if (!p) PyErr_NoMemory();
    return p;
}

/* A list of ints, each in [low, high), copied into a new int64 array. */
static int64_t *read_ints(PyObject *list, const char *name, int64_t low, int64_t high,
                          Py_ssize_t *n) {
    PyObject *seq = PySequence_Fast(list, name);
    if (!seq) return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    int64_t *out = zalloc(len, sizeof(int64_t));
    if (!out) {
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyLong_Check(x)) {
            PyErr_Format(PyExc_TypeError, "%s[%zd] is not an int", name, i);
            goto fail;
        }
        long long v = PyLong_AsLongLong(x);
        if (v == -1 && PyErr_Occurred()) goto fail;
        if (v < low || v >= high) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] = %lld is out of range", name, i, v);
            goto fail;
        }
        out[i] = (int64_t)v;
    }
    *n = len;
    Py_DECREF(seq);
    return out;
fail:
    PyMem_Free(out);
    Py_DECREF(seq);
    return NULL;
}

static int32_t *narrow(int64_t *wide, Py_ssize_t n) {
    int32_t *out = zalloc(n, sizeof(int32_t));
    if (out)
        for (Py_ssize_t i = 0; i < n; i++) out[i] = (int32_t)wide[i];
    PyMem_Free(wide);
    return out;
}

/* An int32 array of ints in [low, high) whose length must be `want` (-1: any). */
static int32_t *read_index(PyObject *list, const char *name, int64_t low, int64_t high,
                           Py_ssize_t want, Py_ssize_t *n) {
    Py_ssize_t len = 0;
    int64_t *wide = read_ints(list, name, low, high, &len);
    if (!wide) return NULL;
    if (want >= 0 && len != want) {
        PyErr_Format(PyExc_ValueError, "%s has %zd items, expected %zd", name, len, want);
        PyMem_Free(wide);
        return NULL;
    }
    if (n) *n = len;
    return narrow(wide, len);
}

/* Offsets into an array of `total` items: n+1 of them, ascending, from 0 to total. */
static int check_starts(const int32_t *starts, Py_ssize_t n, Py_ssize_t total,
                        const char *name) {
    if (starts[0] != 0 || starts[n] != total) goto bad;
    for (Py_ssize_t i = 0; i < n; i++)
        if (starts[i] > starts[i + 1]) goto bad;
    return 0;
bad:
    PyErr_Format(PyExc_ValueError, "%s are not offsets into %zd items", name, total);
    return -1;
}

/* Entries from parallel lists (cost, effect start, effect end). */
static Entry *read_entries(PyObject *costs, PyObject *starts, PyObject *ends,
                           const char *name, Py_ssize_t n_effects, Py_ssize_t *n) {
    Py_ssize_t len = 0, len2 = 0, len3 = 0;
    Entry *out = NULL;
    int64_t *c = read_ints(costs, name, 0, MAX_COST, &len);
    int64_t *s = c ? read_ints(starts, name, 0, n_effects + 1, &len2) : NULL;
    int64_t *e = s ? read_ints(ends, name, 0, n_effects + 1, &len3) : NULL;
    if (!e) goto done;
    if (len2 != len || len3 != len) {
        PyErr_Format(PyExc_ValueError, "%s: lists of different lengths", name);
        goto done;
    }
    out = zalloc(len, sizeof(Entry));
    if (!out) goto done;
    for (Py_ssize_t i = 0; i < len; i++) {
        if (s[i] > e[i]) {
            PyErr_Format(PyExc_ValueError, "%s[%zd]: an empty slice", name, i);
            PyMem_Free(out);
            out = NULL;
            goto done;
        }
        out[i].cost = c[i];
        out[i].start = (int32_t)s[i];
        out[i].end = (int32_t)e[i];
    }
    *n = len;
done:
    PyMem_Free(c);
    PyMem_Free(s);
    PyMem_Free(e);
    return out;
}

static PyObject *Hff_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *goals, *eff_fact, *eff_op, *free_cost, *free_start, *free_end;
    PyObject *direct_start, *direct_cost, *direct_es, *direct_ee;
    PyObject *counted_start, *counted, *group_cost, *group_es, *group_ee, *group_size;
    PyObject *pre_start, *pre, *op_cost, *neg_start, *neg;
    Py_ssize_t n_facts;
    static char *names[] = {
        "n_facts", "goals", "eff_fact", "eff_op", "free_cost", "free_start", "free_end",
        "direct_start", "direct_cost", "direct_effect_start", "direct_effect_end",
        "counted_start", "counted", "group_cost", "group_effect_start", "group_effect_end",
        "group_size", "pre_start", "pre", "op_cost", "neg_start", "neg", NULL,
    };
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "$nOOOOOOOOOOOOOOOOOOOOO", names, &n_facts, &goals, &eff_fact,
            &eff_op, &free_cost, &free_start, &free_end, &direct_start, &direct_cost,
            &direct_es, &direct_ee, &counted_start, &counted, &group_cost, &group_es,
            &group_ee, &group_size, &pre_start, &pre, &op_cost, &neg_start, &neg))
        return NULL;
    if (n_facts < 0 || n_facts > (1 << 30)) {
        PyErr_SetString(PyExc_ValueError, "n_facts out of range");
        return NULL;
    }
    Hff *self = (Hff *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    Py_ssize_t n_effects = 0, n_direct = 0, n_counted = 0, n_pre = 0, n_neg = 0, m = 0;
    int64_t *wide = NULL;
    self->n_facts = n_facts;
    self->n_bytes = (n_facts + 7) / 8;
    if (!(wide = read_ints(op_cost, "op_cost", 0, MAX_COST, &self->n_ops))) goto fail;
    self->op_cost = wide;
    if (!(self->goals = read_index(goals, "goals", 0, n_facts, -1, &self->n_goals))) goto fail;
    if (!(self->eff_fact = read_index(eff_fact, "eff_fact", 0, n_facts, -1, &n_effects)))
        goto fail;
    if (!(self->eff_op = read_index(eff_op, "eff_op", 0, self->n_ops, n_effects, NULL)))
        goto fail;
    if (!(self->free = read_entries(free_cost, free_start, free_end, "free", n_effects,
                                    &self->n_free)))
        goto fail;
    if (!(self->direct = read_entries(direct_cost, direct_es, direct_ee, "direct", n_effects,
                                      &n_direct)))
        goto fail;
    if (!(self->direct_start = read_index(direct_start, "direct_start", 0, n_direct + 1,
                                          n_facts + 1, NULL)) ||
        check_starts(self->direct_start, n_facts, n_direct, "direct_start") < 0)
        goto fail;
    if (!(self->groups = read_entries(group_cost, group_es, group_ee, "groups", n_effects,
                                      &self->n_groups)))
        goto fail;
    if (!(self->group_size = read_index(group_size, "group_size", 1, 1 << 30, self->n_groups,
                                        NULL)))
        goto fail;
    if (!(self->counted = read_index(counted, "counted", 0, self->n_groups, -1, &n_counted)))
        goto fail;
    if (!(self->counted_start = read_index(counted_start, "counted_start", 0, n_counted + 1,
                                           n_facts + 1, NULL)) ||
        check_starts(self->counted_start, n_facts, n_counted, "counted_start") < 0)
        goto fail;
    if (!(self->pre = read_index(pre, "pre", 0, n_facts, -1, &n_pre))) goto fail;
    if (!(self->pre_start = read_index(pre_start, "pre_start", 0, n_pre + 1, self->n_ops + 1,
                                       NULL)) ||
        check_starts(self->pre_start, self->n_ops, n_pre, "pre_start") < 0)
        goto fail;
    if (!(self->neg = read_index(neg, "neg", 0, n_facts, -1, &n_neg))) goto fail;
    if (!(self->neg_start = read_index(neg_start, "neg_start", 0, n_neg + 1, self->n_ops + 1,
                                       NULL)) ||
        check_starts(self->neg_start, self->n_ops, n_neg, "neg_start") < 0)
        goto fail;
    m = self->n_ops > n_facts ? self->n_ops : n_facts;
    if (!(self->is_goal = zalloc(n_facts, 1)) ||
        !(self->cost = zalloc(n_facts, sizeof(int64_t))) ||
        !(self->supporter = zalloc(n_facts, sizeof(int32_t))) ||
        !(self->count = zalloc(self->n_groups, sizeof(int32_t))) ||
        !(self->sum = zalloc(self->n_groups, sizeof(int64_t))) ||
        !(self->mark = zalloc(self->n_ops, sizeof(uint32_t))) ||
        !(self->stack = zalloc(m + self->n_goals + n_pre + 1, sizeof(int32_t))) ||
        !(self->state = zalloc(self->n_bytes, 1)))
        goto fail;
    for (Py_ssize_t i = 0; i < self->n_goals; i++) self->is_goal[self->goals[i]] = 1;
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static int bucket_push(Hff *self, int64_t c, int32_t f) {
    if (c >= self->n_buckets) {
        Py_ssize_t n = self->n_buckets ? self->n_buckets : 16;
        while (n <= c) n *= 2;
        IntVec *grown = PyMem_Realloc(self->buckets, (size_t)n * sizeof(IntVec));
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        memset(grown + self->n_buckets, 0, (size_t)(n - self->n_buckets) * sizeof(IntVec));
        self->buckets = grown;
        self->n_buckets = n;
    }
    return vec_push(&self->buckets[c], f);
}

/* Relax the effects of entry `e` at cost `oc`; highest: the highest bucket in use. */
static inline int relax(Hff *self, const Entry *e, int64_t oc, int64_t *highest) {
    for (int32_t k = e->start; k < e->end; k++) {
        int32_t g = self->eff_fact[k];
        if (oc < self->cost[g]) {
            self->cost[g] = oc;
            self->supporter[g] = self->eff_op[k];
            if (bucket_push(self, oc, g) < 0) return -1;
            if (oc > *highest) *highest = oc;
        }
    }
    return 0;
}

/* The hadd exploration; 1 if every goal fact was reached, 0 if not, -1 on error. */
static int explore(Hff *self) {
    const unsigned char *state = self->state;
    int64_t highest = 0;
    int result = -1;
    Py_ssize_t left = self->n_goals;
    for (Py_ssize_t f = 0; f < self->n_facts; f++) {
        self->cost[f] = UNREACHED;
        self->supporter[f] = -1;
    }
    for (Py_ssize_t f = 0; f < self->n_facts; f++) {
        if (state[f >> 3] >> (f & 7) & 1) {
            self->cost[f] = 0;
            if (bucket_push(self, 0, (int32_t)f) < 0) goto done;
        }
    }
    for (Py_ssize_t i = 0; i < self->n_free; i++)
        if (relax(self, &self->free[i], self->free[i].cost, &highest) < 0) goto done;
    if (!left) {
        result = 1;
        goto done;
    }
    for (Py_ssize_t q = 0; q < self->n_groups; q++) {
        self->count[q] = self->group_size[q];
        self->sum[q] = 0;
    }
    for (int64_t c = 0; c <= highest && c < self->n_buckets; c++) {
        for (Py_ssize_t i = 0; i < self->buckets[c].len; i++) { /* grows while read */
            int32_t f = self->buckets[c].data[i];
            if (self->cost[f] < c) continue; /* settled earlier at a lower cost */
            if (self->is_goal[f] && !--left) {
                result = 1;
                goto done;
            }
            for (int32_t d = self->direct_start[f]; d < self->direct_start[f + 1]; d++)
                if (relax(self, &self->direct[d], c + self->direct[d].cost, &highest) < 0)
                    goto done;
            for (int32_t k = self->counted_start[f]; k < self->counted_start[f + 1]; k++) {
                int32_t q = self->counted[k];
                self->sum[q] += c;
                if (--self->count[q]) continue;
                if (relax(self, &self->groups[q], self->sum[q] + self->groups[q].cost,
                          &highest) < 0)
                    goto done;
            }
        }
    }
    result = 0;
done:
    for (int64_t c = 0; c <= highest && c < self->n_buckets; c++) self->buckets[c].len = 0;
    return result;
}

/* The state's bits, lowest first, into self->state (little-endian bytes). */
static int read_state(Py_ssize_t n_bytes, unsigned char *buffer, PyObject *state) {
    if (!PyLong_Check(state)) {
        PyErr_SetString(PyExc_TypeError, "a state is an int");
        return -1;
    }
    if (!n_bytes) {
        if (PyObject_IsTrue(state)) {
            PyErr_SetString(PyExc_ValueError, "the state has a fact beyond the task's");
            return -1;
        }
        return 0;
    }
#if PY_VERSION_HEX >= 0x030D0000
    Py_ssize_t need = PyLong_AsNativeBytes(
        state, buffer, n_bytes,
        Py_ASNATIVEBYTES_LITTLE_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER |
            Py_ASNATIVEBYTES_REJECT_NEGATIVE);
    if (need < 0) return -1;
    if (need > n_bytes) {
        PyErr_SetString(PyExc_ValueError, "the state has a fact beyond the task's");
        return -1;
    }
    return 0;
#else
    /* raises OverflowError for a negative int or one wider than the task's facts */
    return _PyLong_AsByteArray((PyLongObject *)state, buffer, (size_t)n_bytes, 1, 0);
#endif
}

static inline int holds(const unsigned char *state, int32_t f) {
    return state[f >> 3] >> (f & 7) & 1;
}

/* evaluate(state) -> (h, preferred): as heuristics/ff.py's evaluate. */
static PyObject *Hff_evaluate(Hff *self, PyObject *state) {
    if (read_state(self->n_bytes, self->state, state) < 0) return NULL;
    int reached = explore(self);
    if (reached < 0) return NULL;
    if (!reached) return Py_BuildValue("(d())", Py_HUGE_VAL);
    if (++self->stamp == 0) { /* wrapped: forget every old mark */
        memset(self->mark, 0, (size_t)self->n_ops * sizeof(uint32_t));
        self->stamp = 1;
    }
    uint32_t stamp = self->stamp;
    PyObject *preferred = PySet_New(NULL);
    if (!preferred) return NULL;
    Py_ssize_t top = 0;
    for (Py_ssize_t i = 0; i < self->n_goals; i++) {
        int32_t s = self->supporter[self->goals[i]];
        if (s >= 0) self->stack[top++] = s;
    }
    int64_t h = 0;
    while (top) {
        int32_t o = self->stack[--top];
        if (self->mark[o] == stamp) continue;
        self->mark[o] = stamp;
        h += self->op_cost[o];
        int applicable = 1;
        for (int32_t k = self->pre_start[o]; k < self->pre_start[o + 1]; k++) {
            int32_t s = self->supporter[self->pre[k]];
            if (s >= 0) { /* not in the state: facts of the state have no supporter */
                applicable = 0;
                if (self->mark[s] != stamp) self->stack[top++] = s;
            }
        }
        if (applicable) {
            for (int32_t k = self->neg_start[o]; k < self->neg_start[o + 1]; k++)
                if (holds(self->state, self->neg[k])) {
                    applicable = 0;
                    break;
                }
        }
        if (applicable) {
            PyObject *op = PyLong_FromLong(o);
            if (!op || PySet_Add(preferred, op) < 0) {
                Py_XDECREF(op);
                Py_DECREF(preferred);
                return NULL;
            }
            Py_DECREF(op);
        }
    }
    PyObject *value = PyFloat_FromDouble((double)h);
    if (!value) {
        Py_DECREF(preferred);
        return NULL;
    }
    return Py_BuildValue("(NN)", value, preferred); /* steals both */
}

static PyMethodDef Hff_methods[] = {
    {"evaluate", (PyCFunction)Hff_evaluate, METH_O,
     "evaluate(state) -> (h, preferred operators): hFF of a state (an int of fact bits)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject HffType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "plansmith.planning._native.Hff",
    .tp_basicsize = sizeof(Hff),
    .tp_dealloc = (destructor)Hff_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "hFF of one task, from a Relaxation flattened by heuristics/_ff_native.py.",
    .tp_methods = Hff_methods,
    .tp_new = Hff_new,
};

/* ---- Successors ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    Py_ssize_t n_facts, n_ops, n_bytes, n_always;
    int32_t *pre_start, *pre, *neg_start, *neg, *add_start, *add, *del_start, *del;
    int32_t *always;
    int32_t *key_start, *key_ops; /* the operators filed under each key fact */
    PyObject **op_id, **op_cost;  /* owned references, one per operator */
    unsigned char *state, *succ;
    int32_t *found;
} Successors;

static void Successors_dealloc(Successors *self) {
    void *owned[] = {
        self->pre_start, self->pre, self->neg_start, self->neg, self->add_start, self->add,
        self->del_start, self->del, self->always, self->key_start, self->key_ops,
        self->state, self->succ, self->found,
    };
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) PyMem_Free(owned[i]);
    for (Py_ssize_t o = 0; o < self->n_ops; o++) {
        if (self->op_id) Py_XDECREF(self->op_id[o]);
        if (self->op_cost) Py_XDECREF(self->op_cost[o]);
    }
    PyMem_Free(self->op_id);
    PyMem_Free(self->op_cost);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Offsets and items of one list of facts per operator. */
static int read_lists(PyObject *starts, PyObject *items, const char *name, Py_ssize_t n,
                      Py_ssize_t bound, int32_t **out_starts, int32_t **out_items) {
    Py_ssize_t total = 0;
    if (!(*out_items = read_index(items, name, 0, bound, -1, &total))) return -1;
    if (!(*out_starts = read_index(starts, name, 0, total + 1, n + 1, NULL))) return -1;
    return check_starts(*out_starts, n, total, name);
}

static PyObject *Successors_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *pre_start, *pre, *neg_start, *neg, *add_start, *add, *del_start, *del;
    PyObject *always, *key_start, *key_ops, *costs;
    Py_ssize_t n_facts;
    static char *names[] = {
        "n_facts", "pre_start", "pre", "neg_start", "neg", "add_start", "add", "delete_start",
        "delete", "always", "key_start", "key_ops", "costs", NULL,
    };
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$nOOOOOOOOOOOO", names, &n_facts,
                                     &pre_start, &pre, &neg_start, &neg, &add_start, &add,
                                     &del_start, &del, &always, &key_start, &key_ops, &costs))
        return NULL;
    if (n_facts < 0 || n_facts > (1 << 30)) {
        PyErr_SetString(PyExc_ValueError, "n_facts out of range");
        return NULL;
    }
    PyObject *cost_seq = PySequence_Fast(costs, "costs");
    if (!cost_seq) return NULL;
    Successors *self = (Successors *)type->tp_alloc(type, 0);
    if (!self) {
        Py_DECREF(cost_seq);
        return NULL;
    }
    Py_ssize_t n_ops = PySequence_Fast_GET_SIZE(cost_seq), n_keyed = 0;
    self->n_facts = n_facts;
    self->n_bytes = (n_facts + 7) / 8;
    if (!(self->op_id = zalloc(n_ops, sizeof(PyObject *))) ||
        !(self->op_cost = zalloc(n_ops, sizeof(PyObject *))))
        goto fail;
    self->n_ops = n_ops;
    for (Py_ssize_t o = 0; o < n_ops; o++) {
        PyObject *c = PySequence_Fast_GET_ITEM(cost_seq, o);
        if (!PyLong_Check(c) && !PyFloat_Check(c)) {
            PyErr_Format(PyExc_TypeError, "costs[%zd] is not a number", o);
            goto fail;
        }
        Py_INCREF(c);
        self->op_cost[o] = c;
        if (!(self->op_id[o] = PyLong_FromSsize_t(o))) goto fail;
    }
    if (read_lists(pre_start, pre, "pre", n_ops, n_facts, &self->pre_start, &self->pre) < 0 ||
        read_lists(neg_start, neg, "neg", n_ops, n_facts, &self->neg_start, &self->neg) < 0 ||
        read_lists(add_start, add, "add", n_ops, n_facts, &self->add_start, &self->add) < 0 ||
        read_lists(del_start, del, "del", n_ops, n_facts, &self->del_start, &self->del) < 0)
        goto fail;
    if (!(self->always = read_index(always, "always", 0, n_ops, -1, &self->n_always)))
        goto fail;
    if (!(self->key_ops = read_index(key_ops, "key_ops", 0, n_ops, -1, &n_keyed))) goto fail;
    if (!(self->key_start = read_index(key_start, "key_start", 0, n_keyed + 1, n_facts + 1,
                                       NULL)) ||
        check_starts(self->key_start, n_facts, n_keyed, "key_start") < 0)
        goto fail;
    if (!(self->state = zalloc(self->n_bytes, 1)) || !(self->succ = zalloc(self->n_bytes, 1)) ||
        !(self->found = zalloc(self->n_always + n_keyed, sizeof(int32_t))))  /* every listed operator at most once */
        goto fail;
    Py_DECREF(cost_seq);
    return (PyObject *)self;
fail:
    Py_DECREF(cost_seq);
    Py_DECREF(self);
    return NULL;
}

static inline int applicable(const Successors *self, int32_t o) {
    for (int32_t k = self->pre_start[o]; k < self->pre_start[o + 1]; k++)
        if (!holds(self->state, self->pre[k])) return 0;
    for (int32_t k = self->neg_start[o]; k < self->neg_start[o + 1]; k++)
        if (holds(self->state, self->neg[k])) return 0;
    return 1;
}

static int by_id(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static PyObject *int_of_bytes(const unsigned char *bytes, Py_ssize_t n) {
#if PY_VERSION_HEX >= 0x030D0000
    return PyLong_FromUnsignedNativeBytes(bytes, (size_t)n, Py_ASNATIVEBYTES_LITTLE_ENDIAN);
#else
    return _PyLong_FromByteArray(bytes, (size_t)n, 1, 0);
#endif
}

/* successors(state) -> [(operator id, successor, cost)], by operator id. */
static PyObject *Successors_call(Successors *self, PyObject *state) {
    if (read_state(self->n_bytes, self->state, state) < 0) return NULL;
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < self->n_always; i++)
        if (applicable(self, self->always[i])) self->found[n++] = self->always[i];
    for (Py_ssize_t b = 0; b < self->n_bytes; b++) {
        unsigned byte = self->state[b];
        while (byte) {
            int bit = __builtin_ctz(byte);
            byte &= byte - 1;
            int32_t f = (int32_t)(b * 8 + bit);
            if (f >= self->n_facts) break;
            for (int32_t k = self->key_start[f]; k < self->key_start[f + 1]; k++)
                if (applicable(self, self->key_ops[k])) self->found[n++] = self->key_ops[k];
        }
    }
    qsort(self->found, (size_t)n, sizeof(int32_t), by_id);
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t o = self->found[i];
        memcpy(self->succ, self->state, (size_t)self->n_bytes);
        for (int32_t k = self->del_start[o]; k < self->del_start[o + 1]; k++)
            self->succ[self->del[k] >> 3] &= (unsigned char)~(1u << (self->del[k] & 7));
        for (int32_t k = self->add_start[o]; k < self->add_start[o + 1]; k++)
            self->succ[self->add[k] >> 3] |= (unsigned char)(1u << (self->add[k] & 7));
        PyObject *succ = int_of_bytes(self->succ, self->n_bytes);
        if (!succ) {
            Py_DECREF(out);
            return NULL;
        }
        PyObject *entry = PyTuple_New(3);
        if (!entry) {
            Py_DECREF(succ);
            Py_DECREF(out);
            return NULL;
        }
        Py_INCREF(self->op_id[o]);
        Py_INCREF(self->op_cost[o]);
        PyTuple_SET_ITEM(entry, 0, self->op_id[o]);
        PyTuple_SET_ITEM(entry, 1, succ);
        PyTuple_SET_ITEM(entry, 2, self->op_cost[o]);
        PyList_SET_ITEM(out, i, entry);
    }
    return out;
}

static PyMethodDef Successors_methods[] = {
    {"successors", (PyCFunction)Successors_call, METH_O,
     "successors(state) -> [(operator id, successor, cost)], ordered by operator id."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SuccessorsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "plansmith.planning._native.Successors",
    .tp_basicsize = sizeof(Successors),
    .tp_dealloc = (destructor)Successors_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The successors of a task's states, from operator fact lists (_task.py).",
    .tp_methods = Successors_methods,
    .tp_new = Successors_new,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "plansmith.planning._native",
    .m_doc = "The compiled build's hFF and successor generation (same results as the Python code).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&HffType) < 0 || PyType_Ready(&SuccessorsType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&HffType);
    if (PyModule_AddObject(m, "Hff", (PyObject *)&HffType) < 0) {
        Py_DECREF(&HffType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&SuccessorsType);
    if (PyModule_AddObject(m, "Successors", (PyObject *)&SuccessorsType) < 0) {
        Py_DECREF(&SuccessorsType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
