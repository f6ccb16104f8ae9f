const h0=process.hrtime.bigint();
const fs=require('fs');
const st=fs.statSync; let ns=0n, cnt=0; fs.statSync=function(...a){const s=process.hrtime.bigint(); try{return st.apply(this,a)} finally{ns+=process.hrtime.bigint()-s; cnt++}};
const fast = require('../dist/forge-fast.cjs');
const h1=process.hrtime.bigint();
const code = fast.answer(process.argv.slice(2));
const h2=process.hrtime.bigint();
process.on('exit',()=>{const e=process.hrtime.bigint(); process.stderr.write(`boot ${(performance.now()- Number(e-h0)/1e6).toFixed(2)} require ${Number(h1-h0)/1e6} answer ${Number(h2-h1)/1e6} stats ${cnt} ${Number(ns)/1e6} exit ${Number(e-h2)/1e6}\n`)});
