import math
TTFT=[0.001,0.005,0.01,0.02,0.04,0.06,0.08,0.1,0.25,0.5,0.75,1.0,2.5,5.0,7.5,10.0,20.0,40.0,80.0,160.0,640.0,2560.0]
REQ=[0.3,0.5,0.8,1.0,1.5,2.0,2.5,5.0,10.0,15.0,20.0,30.0,40.0,50.0,60.0,120.0,240.0,480.0,960.0,1920.0,7680.0]
ITL=[0.01,0.025,0.05,0.075,0.1,0.15,0.2,0.3,0.4,0.5,0.75,1.0,2.5,5.0,7.5,10.0,20.0,40.0,80.0]
def fmt(x):
    if x==math.inf: return "+Inf"
    return repr(float(x))
def cum(bounds, points, count):
    # points: {le: cumulative}; cumulative carried forward
    out=[];c=0
    for b in bounds:
        if b in points: c=points[b]
        out.append(c)
    return out
def hist(name, help, labels, bounds, points, count, s, created=None):
    lines=[]
    lab=",".join('%s="%s"'%(k,v) for k,v in labels)
    for b,c in zip(bounds+[math.inf], cum(bounds,points,count)+[count]):
        lines.append('%s_bucket{%sle="%s"} %s'%(name,lab+"," if lab else "",fmt(b),fmt(c)))
    l="{%s}"%lab if lab else ""
    lines.append('%s_sum%s %s'%(name,l,fmt(s)))
    lines.append('%s_count%s %s'%(name,l,fmt(count)))
    return lines
def fam(name, help, typ, body):
    return ["# HELP %s %s"%(name,help),"# TYPE %s %s"%(name,typ)]+body
def gauge(name,labels,v):
    lab=",".join('%s="%s"'%(k,vv) for k,vv in labels)
    return ['%s{%s} %s'%(name,lab,fmt(v))] if lab else ['%s %s'%(name,fmt(v))]

# The figures: TTFT-like, queue-like
TT_B={0.04:0,0.06:1,0.08:2,0.1:3,0.25:4}; TT_A={0.04:0,0.06:3,0.08:6,0.1:11,0.25:13,0.5:14}
Q_B={0.3:4}; Q_A={0.3:12,0.5:14}
def ttft(after): return (TT_A,14,1.5) if after else (TT_B,4,0.4)
def queue(after): return (Q_A,14,1.2) if after else (Q_B,4,0.2)
def long(after): # e2e-like, decode-like
    return ({1.0:10,1.5:14},14,16.0) if after else ({1.0:4},4,3.0)
def short(after): # prefill, itl
    return ({0.01:6, 0.025:14},14,0.2) if after else ({0.01:4},4,0.03)

def page(family, after, other=True, restarted=False):
    L=[]
    if family=="vllm":
        lab=[("engine","0"),("model_name","meta-llama/Llama-3.1-8B-Instruct")]
        oth=[("engine","0"),("model_name","other-model")]
        w=(3,5,0.42) if after else (0,1,0.1)
        L+=fam("vllm:num_requests_running","Number of requests in model execution batches.","gauge",gauge("vllm:num_requests_running",lab,w[1]))
        L+=fam("vllm:num_requests_waiting","Number of requests waiting to be processed.","gauge",gauge("vllm:num_requests_waiting",lab,w[0]))
        L+=fam("vllm:kv_cache_usage_perc","KV-cache usage. 1 means 100 percent usage.","gauge",gauge("vllm:kv_cache_usage_perc",lab,w[2])+gauge("vllm:kv_cache_usage_perc",[("engine","1"),("model_name","meta-llama/Llama-3.1-8B-Instruct")],0.3 if after else 0.2))
        L+=fam("vllm:prompt_tokens_total","Number of prefill tokens processed.","counter",gauge("vllm:prompt_tokens_total",lab,4096 if after else 1024))
        def H(name,help,bounds,fn):
            p,c,s=fn(after)
            body=hist(name,help,lab,bounds,p,c,s)
            if other:
                body+=hist(name,help,oth,bounds,{bounds[0]:900},1000,5000.0+(100 if after else 0))
            return fam(name,help,"histogram",body)
        L+=H("vllm:time_to_first_token_seconds","Histogram of time to first token in seconds.",TTFT,ttft)
        L+=H("vllm:time_per_output_token_seconds","Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead.",ITL,short)
        L+=H("vllm:e2e_request_latency_seconds","Histogram of e2e request latency in seconds.",REQ,long)
        L+=H("vllm:request_queue_time_seconds","Histogram of time spent in WAITING phase for request.",REQ,queue)
        L+=H("vllm:request_inference_time_seconds","Histogram of time spent in RUNNING phase for request.",REQ,long)
        L+=H("vllm:request_prefill_time_seconds","Histogram of time spent in PREFILL phase for request.",REQ,lambda a:({0.3:14},14,0.7) if a else ({0.3:4},4,0.2))
        L+=H("vllm:request_decode_time_seconds","Histogram of time spent in DECODE phase for request.",REQ,long)
        L+=["# HELP vllm:e2e_request_latency_seconds_created Histogram of e2e request latency in seconds.","# TYPE vllm:e2e_request_latency_seconds_created gauge",'vllm:e2e_request_latency_seconds_created{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.7640000000e+09']
        L+=fam("process_start_time_seconds","Start time of the process since unix epoch in seconds.","gauge",["process_start_time_seconds %s"%("1764000500.0" if restarted else "1764000000.0")])
    if family=="sglang":
        lab=[("engine_type","unified"),("model_name","Qwen/Qwen2.5-7B-Instruct"),("pp_rank","0"),("tp_rank","0")]
        w=(3,5,0.42) if after else (0,1,0.1)
        L+=fam("sglang:num_running_reqs","The number of running requests.","gauge",gauge("sglang:num_running_reqs",lab,w[1]))
        L+=fam("sglang:num_queue_reqs","The number of requests in the waiting queue.","gauge",gauge("sglang:num_queue_reqs",lab,w[0]))
        L+=fam("sglang:token_usage","The token usage.","gauge",gauge("sglang:token_usage",lab,w[2]))
        def H(name,help,bounds,fn,extra=[]):
            p,c,s=fn(after)
            return hist(name,help,lab+extra,bounds,p,c,s)
        L+=fam("sglang:time_to_first_token_seconds","Histogram of time to first token in seconds.","histogram",H("sglang:time_to_first_token_seconds","",TTFT,ttft))
        L+=fam("sglang:e2e_request_latency_seconds","Histogram of End-to-end request latency in seconds","histogram",H("sglang:e2e_request_latency_seconds","",REQ,long))
        L+=fam("sglang:inter_token_latency_seconds","Histogram of inter-token latency in seconds.","histogram",H("sglang:inter_token_latency_seconds","",ITL,short))
        QB=[0.0,0.1,0.2,0.3,0.5,1,2,5,10]
        L+=fam("sglang:queue_time_seconds","Histogram of queueing time in seconds.","histogram",H("sglang:queue_time_seconds","",QB,queue))
        PB=[0.001*1.62**i for i in range(30)]
        body=[]
        for stage,fn in (("prefill_waiting",queue),("prefill_forward",lambda a:({PB[9]:14},14,0.7) if a else ({PB[9]:4},4,0.2)),("decode_loop",long)):
            p,c,s=fn(after)
            # map points onto the stage buckets: the nearest bound at or above
            pts={}
            for le,v in p.items():
                b=min(x for x in PB if x>=le) if le<=PB[-1] else PB[-1]
                pts[b]=v
            body+=hist("sglang:per_stage_req_latency_seconds","",lab+[("stage",stage)],PB,pts,c,s)
        L+=fam("sglang:per_stage_req_latency_seconds","The latency of each stage of requests.","histogram",body)
    if family=="tgi":
        w=(3,5) if after else (0,1)
        L+=fam("tgi_queue_size","","gauge",gauge("tgi_queue_size",[],w[0]))
        L+=fam("tgi_batch_current_size","","gauge",gauge("tgi_batch_current_size",[],w[1]))
        L+=fam("tgi_request_count","","counter",gauge("tgi_request_count",[],14 if after else 4))
        for name,fn in (("tgi_request_queue_duration",queue),("tgi_request_duration",long),("tgi_request_inference_duration",long),("tgi_request_mean_time_per_token_duration",short)):
            p,c,s=fn(after)
            L+=fam(name,"","histogram",hist(name,"",[],REQ if fn!=short else ITL,p,c,s))
        L+=fam("tgi_batch_forward_duration","","histogram",hist("tgi_batch_forward_duration","",[("method","prefill")],REQ,{0.3:8},8,0.4))
    if family=="trtllm":
        lab=[("engine_type","trtllm"),("model_name","nvidia/Llama-3.1-8B-Instruct-FP8")]
        w=(3,5,0.42) if after else (0,1,0.1)
        L+=fam("trtllm_num_requests_running","Number of active requests","gauge",gauge("trtllm_num_requests_running",lab,w[1]))
        L+=fam("trtllm_num_requests_waiting","Number of queued requests","gauge",gauge("trtllm_num_requests_waiting",lab,w[0]))
        L+=fam("trtllm_kv_cache_utilization","KV cache utilization","gauge",gauge("trtllm_kv_cache_utilization",lab,w[2]))
        for name,help,b,fn in (("trtllm_time_to_first_token_seconds","Histogram of time to first token in seconds.",TTFT,ttft),
            ("trtllm_request_queue_time_seconds","Histogram of time spent in WAITING phase for request.",REQ,queue),
            ("trtllm_request_prefill_time_seconds","Histogram of prefill (context) phase duration in seconds (first_token_time - first_scheduled_time).",[0.001,0.005,0.01,0.025,0.05,0.1,0.25,0.5,1.0],short),
            ("trtllm_request_decode_time_seconds","Histogram of decode (generation) phase duration in seconds (last_token_time - first_token_time).",REQ,long),
            ("trtllm_request_inference_time_seconds","Histogram of total inference duration in seconds (last_token_time - first_scheduled_time).",REQ,long),
            ("trtllm_e2e_request_latency_seconds","Histogram of end to end request latency in seconds.",REQ,long),
            ("trtllm_time_per_output_token_seconds","Histogram of time per output token in seconds.",ITL,short)):
            p,c,s=fn(after)
            L+=fam(name,help,"histogram",hist(name,help,lab,b,p,c,s))
        L+=fam("trtllm_request_success_total","Count of successfully processed requests.","counter",gauge("trtllm_request_success_total",lab+[("finished_reason","length")],14 if after else 4))
    return "\n".join(L)+"\n"

import sys
d=sys.argv[1]
for f in ("vllm","sglang","tgi","trtllm"):
    for a,n in ((False,"before"),(True,"after")):
        open("%s/%s-%s.txt"%(d,f,n),"w").write(page(f,a))
open("%s/vllm-restarted.txt"%d,"w").write(page("vllm",False,restarted=True).replace("1764000500.0","1764000500.0"))
